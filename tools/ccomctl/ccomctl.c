// SPDX-License-Identifier: MIT
/*
 * ccomctl.c - command line of ccomctl: options, the object table and the
 * argument helpers every object file uses.  The objects live in one file
 * each (dev.c, client.c, comm.c, queue.c, sem.c, stats.c, monitor.c,
 * job.c), in the style of iproute2's rdma tool.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccomctl.h"
#include "ccom_pubstate.h"

static void usage(void)
{
	fprintf(stderr,
		"Usage: ccomctl [OPTIONS] OBJECT [COMMAND] [ARGS]\n"
		"OBJECT := { dev | client | comm | queue | sem | stats | monitor | job | flight | help }\n"
		"OPTIONS := { -j[son] | -p[retty] | -d[ir] DIR | -s[erver] HOST:PORT | -V[ersion] | -h[elp] }\n"
		"  -j          JSON output\n"
		"  -p          pretty (indented) JSON\n"
		"  -d DIR      directory of library-published state (default $CCOM_PUBLISH_DIR or %s)\n"
		"  -s H:P      local ccomd whose peers `job` asks when none are named\n"
		"              (default 127.0.0.1:9464)\n"
		"Run `ccomctl OBJECT help` for the commands of an object.\n"
		"Exit: 0 ok, 1 usage/other error, 2 driver not loaded or operation unsupported,\n"
		"      3 permission denied, 4 no such object, 5 netlink/ccomd communication failure\n",
		CCOM_PUB_DEFAULT_DIR);
}

bool ctl_match(const char *arg, const char *kw)
{
	size_t n = strlen(arg);

	return n > 0 && n <= strlen(kw) && !strncmp(arg, kw, n);
}

const char *ctl_next(struct ccomctl *c)
{
	if (c->argc <= 0)
		return NULL;
	c->argc--;
	return *c->argv++;
}

int ctl_parse_u64(const char *what, const char *s, uint64_t *v)
{
	char *end;

	if (!s) {
		fprintf(stderr, "ccomctl: %s needs a value\n", what);
		return CTL_EUSAGE;
	}
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "ccomctl: %s \"%s\" is not a non-negative integer\n", what, s);
		return CTL_EUSAGE;
	}
	return CTL_OK;
}

int ctl_parse_u32(const char *what, const char *s, uint32_t *v)
{
	uint64_t x;
	int rc = ctl_parse_u64(what, s, &x);

	if (rc)
		return rc;
	if (x > UINT32_MAX) {
		fprintf(stderr, "ccomctl: %s %s is larger than %u\n", what, s, UINT32_MAX);
		return CTL_EUSAGE;
	}
	*v = (uint32_t)x;
	return CTL_OK;
}

/* If the next argument is @kw, consume it and its value into @v. */
int ctl_parse_keyval_u32(struct ccomctl *c, const char *kw, uint32_t *v, bool *set)
{
	if (c->argc <= 0 || strcmp(c->argv[0], kw))
		return CTL_OK;
	ctl_next(c);
	*set = true;
	return ctl_parse_u32(kw, ctl_next(c), v);
}

/* Is @arg an index or a filter keyword rather than a command? */
static bool ctl_default_arg(const char *arg)
{
	static const char *const filters[] = { "client", "handle", "dev", "state", "hash",
					       "rank", "all", "count", NULL };
	int i;

	if (arg[0] >= '0' && arg[0] <= '9')
		return true;
	for (i = 0; filters[i]; i++)
		if (!strcmp(arg, filters[i]))
			return true;
	return false;
}

/*
 * Run the entry of @cmds named by the next argument; the first entry is the
 * default when there is none.  Unknown names fail (rdma's "return 0 after
 * Unknown" is what we avoid).
 */
int ctl_exec(struct ccomctl *c, const struct ctl_cmd *cmds, const char *what, void (*help)(void))
{
	const char *arg = c->argc > 0 ? c->argv[0] : NULL;
	const struct ctl_cmd *cmd;

	if (!arg)
		return cmds[0].fn(c);
	if (ctl_match(arg, "help")) {
		help();
		return CTL_OK;
	}
	for (cmd = cmds; cmd->name; cmd++) {
		if (ctl_match(arg, cmd->name)) {
			ctl_next(c);
			return cmd->fn(c);
		}
	}
	/* "dev 0", "queue state error": arguments of the default command. */
	if (ctl_default_arg(arg))
		return cmds[0].fn(c);
	fprintf(stderr, "ccomctl: unknown %s \"%s\"; try `ccomctl %s help`\n", what, arg,
		what);
	return CTL_EUSAGE;
}

static int cmd_help(struct ccomctl *c)
{
	(void)c;
	usage();
	return CTL_OK;
}

static const struct ctl_cmd objects[] = {
	{ "dev", cmd_dev },
	{ "client", cmd_client },
	{ "comm", cmd_comm },
	{ "queue", cmd_queue },
	{ "sem", cmd_sem },
	{ "stats", cmd_stats },
	{ "monitor", cmd_monitor },
	{ "job", cmd_job },
	{ "flight", cmd_flight },
	{ "help", cmd_help },
	{ NULL, NULL },
};

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "dir", required_argument, NULL, 'd' },
	{ "server", required_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct ccomctl c = { .timeout_ms = 3000, .ccomd = "127.0.0.1:9464" };
	bool json = false, pretty = false;
	const struct ctl_cmd *obj;
	int opt, rc;

	c.pubdir = getenv("CCOM_PUBLISH_DIR");
	if (!c.pubdir || !c.pubdir[0])
		c.pubdir = CCOM_PUB_DEFAULT_DIR;
	while ((opt = getopt_long(argc, argv, "+jpd:s:Vh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'd':
			c.pubdir = optarg;
			break;
		case 's':
			c.ccomd = optarg;
			c.ccomd_given = true;
			break;
		case 'V':
			printf("ccomctl 0.1.0 (netlink family %s version %d)\n", "nccom", 1);
			return CTL_OK;
		case 'h':
			usage();
			return CTL_OK;
		default:
			usage();
			return CTL_EUSAGE;
		}
	}
	pr_init(&c.pr, stdout, json, pretty);
	c.nl.flush = c.pr.out;
	c.argc = argc - optind;
	c.argv = argv + optind;
	if (c.argc == 0) {
		usage();
		return CTL_EUSAGE;
	}
	for (obj = objects; obj->name; obj++)
		if (ctl_match(c.argv[0], obj->name))
			break;
	if (!obj->name) {
		fprintf(stderr, "ccomctl: unknown object \"%s\"; try `ccomctl help`\n", c.argv[0]);
		return CTL_EUSAGE;
	}
	ctl_next(&c);
	rc = obj->fn(&c);
	ctl_nl_close(&c.nl);
	if (fflush(stdout) && !rc)
		rc = CTL_EIO;
	return rc;
}
