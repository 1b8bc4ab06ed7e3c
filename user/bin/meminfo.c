/*
 * meminfo: what the system says about itself without /proc: uname(2),
 * then sysinfo(2) (memory, uptime, processes), or why it failed.
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
	printf("MemTotal:  %10llu kB\n", (unsigned long long)si.totalram * si.mem_unit / 1024);
	printf("MemFree:   %10llu kB\n", (unsigned long long)si.freeram * si.mem_unit / 1024);
	printf("Uptime:    %10ld s\n", si.uptime);
	printf("Processes: %10u\n", si.procs);
	return 0;
}
