/*
 * setjmp/longjmp for the kernel (arch/x86_64/lib/setjmp.S). Used by the test
 * runner to get out of a test case that faulted, and by fault_catch to turn
 * an expected exception into a return value.
 */
#ifndef ASM_SETJMP_H
#define ASM_SETJMP_H

#include <quire/types.h>

/* rbx, rbp, r12-r15, rsp, rip */
typedef struct { u64 regs[8]; } jmp_buf[1];

int setjmp(jmp_buf env) __attribute__((returns_twice));
__attribute__((noreturn)) void longjmp(jmp_buf env, int val);
/* longjmp, and turn interrupts on as it lands. */
__attribute__((noreturn)) void longjmp_irq_on(jmp_buf env, int val);

#endif
