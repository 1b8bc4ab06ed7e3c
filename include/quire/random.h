/*
 * Random numbers (drivers/random.c): a TSC-seeded xorshift generator, NOT
 * cryptographic (Quire has no entropy source yet). getrandom(2),
 * /dev/random and /dev/urandom read from it.
 */
#ifndef QUIRE_RANDOM_H
#define QUIRE_RANDOM_H

#include <quire/types.h>

u64 get_random_u64(void);
void get_random_bytes(void *buf, size_t len);
/* /dev/random (1:8) and /dev/urandom (1:9). */
void random_devices_init(void);

#endif
