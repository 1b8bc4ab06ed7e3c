/* The boot command line, parsed against the options registered in the image. */
#include <quire/cmdline.h>
#include <quire/printk.h>

extern const struct cmdline_opt __start_cmdline_opts[], __stop_cmdline_opts[];

const struct cmdline_opt *cmdline_registered(size_t *count)
{
	*count = (size_t)(__stop_cmdline_opts - __start_cmdline_opts);
	return __start_cmdline_opts;
}

int cmdline_parse_boot(const char *cmdline)
{
	size_t n;
	const struct cmdline_opt *opts = cmdline_registered(&n);

	return cmdline_parse(cmdline, opts, n);
}

/* "help" on the command line lists every option the kernel understands. */
static int show_help(const char *value)
{
	size_t n;
	const struct cmdline_opt *o = cmdline_registered(&n);

	pr_info("cmdline: %zu options:\n", n);
	for (size_t i = 0; i < n; i++)
		pr_info("cmdline:   %-12s %s\n", o[i].name, o[i].help);
	return 0;
}
CMDLINE_CALL("help", show_help, "list the command-line options");
