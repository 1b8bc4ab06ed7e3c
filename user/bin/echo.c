/* echo [-n] [ARG...]: print the arguments, separated by spaces. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int i = 1, newline = 1;

	if (argc > 1 && !strcmp(argv[1], "-n")) {
		newline = 0;
		i++;
	}
	for (; i < argc; i++)
		printf("%s%s", argv[i], i + 1 < argc ? " " : "");
	if (newline)
		putchar('\n');
	return fflush(stdout) ? 1 : 0;
}
