/*
 * meminfo: what the system says about itself without /proc: uname(2),
 * then sysinfo(2) (memory, uptime, processes) where the kernel has it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

int main(void)
{
	struct utsname u;
	struct sysinfo si;

	if (uname(&u) == 0)
		printf("%s %s %s %s (%s)\n", u.sysname, u.nodename, u.release, u.version, u.machine);
	else
		printf("uname: %s\n", strerror(errno));
	if (sysinfo(&si) < 0) {
		printf("sysinfo: %s\n", strerror(errno));
		return 0;
	}
	printf("MemTotal:  %10lu kB\n", si.totalram / 1024 * si.mem_unit);
	printf("MemFree:   %10lu kB\n", si.freeram / 1024 * si.mem_unit);
	printf("Uptime:    %10ld s\n", si.uptime);
	printf("Processes: %10u\n", si.procs);
	return 0;
}
