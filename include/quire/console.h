/*
 * Console input (drivers/serial.c today): bytes typed on the serial port,
 * kept in a ring buffer by the receive interrupt. Output is console_write
 * (quire/printk.h).
 */
#ifndef QUIRE_CONSOLE_H
#define QUIRE_CONSOLE_H

#include <quire/types.h>

/*
 * The next input byte (0-255). block: sleep until one arrives; otherwise
 * -EAGAIN when none is waiting. Task context only when blocking.
 */
int console_getc(bool block);
/*
 * Wait until at least one byte is there, then take up to len of those
 * waiting (what a tty read in raw mode does). Returns the count; 0 only
 * for len 0. Task context.
 */
size_t console_read(char *buf, size_t len);
/* The same, but a signal ends the wait: -ERESTARTSYS then, nothing taken (a tty read). */
long console_read_interruptible(char *buf, size_t len);
/*
 * What wakes a reader when input arrives (poll: drivers/tty.c), or NULL
 * when input is polled rather than interrupt driven (then look again
 * every few milliseconds).
 */
struct wait_queue_head *console_input_wait_queue(void);
/* Bytes typed and not yet taken (polled input: read from the port first). */
size_t console_input_available(void);
/*
 * /proc/<pid>/stat: the controlling terminal of session sid as Linux's
 * tty_nr (0: none) and its foreground process group in *tpgid (-1: none).
 */
int tty_of_session(int sid, int *tpgid);
/*
 * The terminal's signal characters (drivers/tty.c), offered each byte
 * the serial port receives, in its interrupt: true when c was taken as
 * VINTR, VQUIT or VSUSP for the foreground process group (the byte then
 * goes no further, and the input before it is dropped, as Linux flushes
 * it); false for any other byte, or when no group is in the foreground.
 */
bool tty_receive_signal_char(char c);

/*
 * With echo_console=1 on the command line: echo what is typed back from a
 * kernel thread until Ctrl-D, then return (drivers/console_echo.c).
 * Otherwise returns at once. Called by start_kernel.
 */
void console_echo_run(void);

#endif
