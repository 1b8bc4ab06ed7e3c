#ifndef QUIRE_INIT_H
#define QUIRE_INIT_H

#include <quire/compiler.h>

#define QUIRE_VERSION "0.1"

/* The architecture-independent start, called once the CPU is set up. */
__noreturn void start_kernel(void);

#endif
