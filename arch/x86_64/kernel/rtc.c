/*
 * The PC's battery-backed clock (the MC146818 RTC in the CMOS), read once
 * at boot to start CLOCK_REALTIME (kernel/time.c). QEMU keeps it in UTC
 * (its default -rtc base=utc). Registers: 0 seconds, 2 minutes, 4 hours,
 * 7 day, 8 month, 9 year, 0x32 century (QEMU's, and the ACPI FADT's usual
 * index); status A bit 7: an update is in progress; status B bit 2: binary
 * (else BCD), bit 1: 24-hour (else 12, with bit 7 of the hour for PM).
 */
#include <quire/time.h>
#include <quire/types.h>
#include <asm/io.h>

#define CMOS_INDEX	0x70
#define CMOS_DATA	0x71
#define RTC_STATUS_A	0x0a
#define RTC_STATUS_B	0x0b
#define RTC_UIP		0x80
#define RTC_DM_BINARY	0x04
#define RTC_24H		0x02
#define RTC_CENTURY	0x32

static u8 cmos_read(u8 reg)
{
	outb(CMOS_INDEX, reg);		/* bit 7 clear: NMIs stay enabled */
	return inb(CMOS_DATA);
}

struct rtc_time {
	u8 sec, min, hour, day, mon, year, century;
};

static void rtc_read_raw(struct rtc_time *t)
{
	while (cmos_read(RTC_STATUS_A) & RTC_UIP)
		;
	t->sec = cmos_read(0x00);
	t->min = cmos_read(0x02);
	t->hour = cmos_read(0x04);
	t->day = cmos_read(0x07);
	t->mon = cmos_read(0x08);
	t->year = cmos_read(0x09);
	t->century = cmos_read(RTC_CENTURY);
}

static unsigned int bcd(u8 v)
{
	return (v & 0x0f) + (v >> 4) * 10;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static s64 days_from_civil(s64 y, unsigned int m, unsigned int d)
{
	s64 era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (s64)doe - 719468;
}

u64 read_persistent_clock(void)
{
	struct rtc_time a, b;
	unsigned int sec, min, hour, day, mon, year;
	bool pm;
	u8 status;

	/* Read until two reads agree: no update came between the registers. */
	rtc_read_raw(&a);
	for (int tries = 0; tries < 10; tries++) {
		rtc_read_raw(&b);
		if (!__builtin_memcmp(&a, &b, sizeof(a)))
			break;
		a = b;
	}
	status = cmos_read(RTC_STATUS_B);
	pm = !(status & RTC_24H) && (a.hour & 0x80);
	a.hour &= 0x7f;
	if (status & RTC_DM_BINARY) {
		sec = a.sec, min = a.min, hour = a.hour, day = a.day, mon = a.mon;
		year = a.year + (a.century ? a.century * 100U : 2000U);
	} else {
		sec = bcd(a.sec), min = bcd(a.min), hour = bcd(a.hour);
		day = bcd(a.day), mon = bcd(a.mon);
		year = bcd(a.year) + (a.century ? bcd(a.century) * 100U : 2000U);
	}
	if (!(status & RTC_24H))
		hour = hour % 12 + (pm ? 12 : 0);
	if (sec > 59 || min > 59 || hour > 23 || day < 1 || day > 31 || mon < 1 || mon > 12 ||
	    year < 1970)
		return 0;	/* no clock, or nonsense in it: the caller says so */
	return (u64)(days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec);
}
