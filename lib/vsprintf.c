/*
 * vsnprintf for the kernel: the usual conversions, flags, width, precision
 * and length modifiers, no floating point. Everything is formatted into the
 * caller's buffer; output past the end is counted but not written, so the
 * return value is the length the whole output would have had (as in C).
 */
#include <quire/kernel.h>
#include <quire/string.h>

enum {
	F_LEFT = 1,	/* '-' */
	F_ZERO = 2,	/* '0' */
	F_PLUS = 4,	/* '+' */
	F_SPACE = 8,	/* ' ' */
	F_ALT = 16,	/* '#' */
	F_UPPER = 32,
};

struct out {
	char *buf;
	size_t size;
	size_t len;	/* characters produced so far, written or not */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

static void put_str(struct out *o, const char *s, int width, int prec, int flags)
{
	int len;

	if (!s)
		s = "(null)";
	len = (int)strnlen(s, prec < 0 ? (size_t)-1 : (size_t)prec);
	if (!(flags & F_LEFT))
		pad(o, ' ', width - len);
	for (int i = 0; i < len; i++)
		put(o, s[i]);
	if (flags & F_LEFT)
		pad(o, ' ', width - len);
}

static void put_num(struct out *o, unsigned long long v, bool negative,
		    unsigned int base, int width, int prec, int flags)
{
	const char *digits = (flags & F_UPPER) ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];	/* 2^64 in octal is 22 digits */
	int n = 0, zeros, total;
	char sign = 0;
	const char *prefix = "";

	if (negative)
		sign = '-';
	else if (flags & F_PLUS)
		sign = '+';
	else if (flags & F_SPACE)
		sign = ' ';
	if ((flags & F_ALT) && v != 0 && base == 16)
		prefix = (flags & F_UPPER) ? "0X" : "0x";

	/* An explicit precision of 0 prints nothing for the value 0. */
	if (!(v == 0 && prec == 0)) {
		do {
			tmp[n++] = digits[v % base];
			v /= base;
		} while (v);
	}

	zeros = prec > n ? prec - n : 0;
	/* '#' with octal: the first digit is a 0, one is added only if needed. */
	if ((flags & F_ALT) && base == 8 && zeros == 0 && (n == 0 || tmp[n - 1] != '0'))
		zeros = 1;
	total = n + zeros + (sign ? 1 : 0) + (int)strlen(prefix);
	if ((flags & F_ZERO) && !(flags & F_LEFT) && prec < 0 && width > total) {
		zeros += width - total;
		total = width;
	}
	if (!(flags & F_LEFT))
		pad(o, ' ', width - total);
	if (sign)
		put(o, sign);
	for (const char *p = prefix; *p; p++)
		put(o, *p);
	pad(o, '0', zeros);
	while (n)
		put(o, tmp[--n]);
	if (flags & F_LEFT)
		pad(o, ' ', width - total);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int flags = 0, width = -1, prec = -1;
		int lng = 0;	/* -2 hh, -1 h, 0 int, 1 long, 2 long long */
		unsigned long long uv;
		long long sv;
		unsigned int base = 10;
		bool is_signed = false;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		/* flags */
		for (;;) {
			char c = *++fmt;

			if (c == '-') flags |= F_LEFT;
			else if (c == '0') flags |= F_ZERO;
			else if (c == '+') flags |= F_PLUS;
			else if (c == ' ') flags |= F_SPACE;
			else if (c == '#') flags |= F_ALT;
			else break;
		}
		/* width */
		if (*fmt == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				flags |= F_LEFT;
				width = -width;
			}
			fmt++;
		} else {
			for (width = 0; *fmt >= '0' && *fmt <= '9'; fmt++)
				width = width * 10 + (*fmt - '0');
		}
		/* precision */
		if (*fmt == '.') {
			fmt++;
			if (*fmt == '*') {
				prec = va_arg(ap, int);
				if (prec < 0)
					prec = -1;
				fmt++;
			} else {
				for (prec = 0; *fmt >= '0' && *fmt <= '9'; fmt++)
					prec = prec * 10 + (*fmt - '0');
			}
		}
		/* length */
		for (;; fmt++) {
			if (*fmt == 'h') lng = lng <= 0 ? lng - 1 : lng;
			else if (*fmt == 'l') lng++;
			else if (*fmt == 'z' || *fmt == 't' || *fmt == 'j') lng = 1;
			else break;
		}

		switch (*fmt) {
		case 'c':
			if (!(flags & F_LEFT))
				pad(&o, ' ', width - 1);
			put(&o, (char)va_arg(ap, int));
			if (flags & F_LEFT)
				pad(&o, ' ', width - 1);
			continue;
		case 's':
			put_str(&o, va_arg(ap, const char *), width, prec, flags);
			continue;
		case 'p':
			uv = (unsigned long long)(uintptr_t)va_arg(ap, void *);
			put_num(&o, uv, false, 16, width, prec, flags | F_ALT);
			continue;
		case '%':
			put(&o, '%');
			continue;
		case 'd':
		case 'i':
			is_signed = true;
			break;
		case 'u':
			break;
		case 'x':
			base = 16;
			break;
		case 'X':
			base = 16;
			flags |= F_UPPER;
			break;
		case 'o':
			base = 8;
			break;
		case '\0':
			fmt--;	/* a lone '%' at the end: stop cleanly */
			continue;
		default:
			/* Unknown conversion: print it as is so the mistake shows. */
			put(&o, '%');
			put(&o, *fmt);
			continue;
		}

		if (is_signed) {
			if (lng >= 2) sv = va_arg(ap, long long);
			else if (lng == 1) sv = va_arg(ap, long);
			else sv = va_arg(ap, int);
			if (lng == -1) sv = (short)sv;
			if (lng <= -2) sv = (signed char)sv;
			uv = sv < 0 ? 0 - (unsigned long long)sv : (unsigned long long)sv;
			put_num(&o, uv, sv < 0, base, width, prec, flags);
		} else {
			if (lng >= 2) uv = va_arg(ap, unsigned long long);
			else if (lng == 1) uv = va_arg(ap, unsigned long);
			else uv = va_arg(ap, unsigned int);
			if (lng == -1) uv = (unsigned short)uv;
			if (lng <= -2) uv = (unsigned char)uv;
			put_num(&o, uv, false, base, width, prec,
				flags & ~(F_PLUS | F_SPACE));
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (size == 0)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < (int)size ? n : (int)size - 1;
}

int scnprint_id_list(char *buf, size_t size, u64 mask)
{
	int len = 0;

	for (int i = 0; i < 64; i++) {
		int j = i;

		if (!(mask & (1ULL << i)))
			continue;
		while (j + 1 < 64 && (mask & (1ULL << (j + 1))))
			j++;
		len += scnprintf(buf + len, size - len, "%s%d", len ? "," : "", i);
		if (j > i)
			len += scnprintf(buf + len, size - len, "-%d", j);
		i = j;
	}
	return len;
}
