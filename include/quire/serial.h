#ifndef QUIRE_SERIAL_H
#define QUIRE_SERIAL_H

#include <quire/types.h>

/* The 16550 UART on COM1: the kernel console. */
void serial_init(void);
void serial_putc(char c);
/* Whether a UART answered at COM1 (false on a machine without one). */
bool serial_present(void);

#endif
