/*
 * mm_stress (user/tests/mm_stress.c) built against glibc, dynamically
 * linked: the same threads and operations through glibc's pthreads
 * (clone, futexes), its mmap/mremap/madvise wrappers and its fork, which
 * runs its atfork handlers and resets its locks in the child.
 */
#include "mm_stress.c"
