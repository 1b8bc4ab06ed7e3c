/*
 * Signals on the host: mm/ sends one when a process must hear of a memory
 * error (memory_failure's SIGBUS BUS_MCEERR_AR). There are no processes
 * here; the host tests read what would have been sent.
 */
#include <quire/signal.h>
#include <quire/printk.h>
#include <asm/host_mm.h>
#include <quire/memory-failure.h>

struct host_sigbus host_last_sigbus;

void force_sig_mceerr(int si_code, unsigned long addr, short lsb, const char *why)
{
	host_last_sigbus = (struct host_sigbus){ .count = host_last_sigbus.count + 1,
						 .code = si_code, .addr = addr, .lsb = lsb };
	pr_info("host: SIGBUS (code %d) at %#lx: %s\n", si_code, addr, why);
}

/* No processes on the host: nobody to tell early (the host tests read the count). */
unsigned long host_early_kills;

void memory_failure_kill_early(struct mm_struct *mm, unsigned long addr)
{
	(void)mm;
	host_early_kills++;
	pr_info("host: early kill of the processes of an address space at %#lx\n", addr);
}
