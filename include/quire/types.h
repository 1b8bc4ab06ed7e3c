/* Fixed-size integer types and the few basic definitions every file needs. */
#ifndef QUIRE_TYPES_H
#define QUIRE_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <quire/compiler.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

typedef u64 phys_addr_t;

#endif
