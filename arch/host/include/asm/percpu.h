/* Host: a thread stands for a CPU; its struct percpu is thread-local. */
#ifndef ASM_PERCPU_H
#define ASM_PERCPU_H

extern __thread struct percpu *host_this_cpu;

static inline struct percpu *this_cpu(void)
{
	return host_this_cpu;
}

#define this_cpu_read(field) (host_this_cpu->field)
#define this_cpu_add_int(field, val) (host_this_cpu->field += (val))

#endif
