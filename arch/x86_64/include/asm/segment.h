/* Segment selectors (usable from assembly too). */
#ifndef ASM_SEGMENT_H
#define ASM_SEGMENT_H

/* GDT layout, ordered for SYSCALL/SYSRET (user SS = base + 8, CS = base + 16). */
#define GDT_KERNEL_CS	0x08
#define GDT_KERNEL_DS	0x10
#define GDT_USER32_CS	0x18
#define GDT_USER_DS	0x20
#define GDT_USER_CS	0x28
#define GDT_TSS		0x30	/* 16 bytes */

#endif
