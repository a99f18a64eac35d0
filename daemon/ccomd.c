// SPDX-License-Identifier: MIT
/*
 * ccomd.c - ccomd's command line, configuration file and main loop: it
 * starts the HTTP server and the events thread, then scans the
 * library-published state every interval until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccomd.h"

/* Set by SIGTERM/SIGINT: the one piece of daemon state outside struct ccomd. */
static volatile sig_atomic_t ccomd_stop;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ccomd [-l ADDR:PORT] [-d DIR] [-p PEER,...] [-c FILE] [-i MS] [-t MS] [-C]\n"
		"  -l, --listen ADDR:PORT   HTTP address (default %s; [::1]:PORT for IPv6)\n"
		"  -d, --dir DIR            published-state directory (default $CCOM_PUBLISH_DIR or %s)\n"
		"  -p, --peers H:P,...      other hosts' ccomd, for /v1/job\n"
		"  -c, --config FILE        key = value lines: listen, dir, peers, interval_ms,\n"
		"                           peer_timeout_ms, clean_stale (command line wins)\n"
		"  -i, --interval MS        scan period (default 1000)\n"
		"  -t, --peer-timeout MS    per-peer timeout (default 2000)\n"
		"  -C, --clean-stale        remove state files of dead processes\n",
		CCOMD_DEFAULT_LISTEN, CCOM_PUB_DEFAULT_DIR);
}

static int set_int(const char *key, const char *v, int min, int max, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max) {
		fprintf(stderr, "ccomd: %s must be an integer in [%d, %d], got \"%s\"\n", key, min,
			max, v);
		return -EINVAL;
	}
	*out = (int)x;
	return 0;
}

static int set_str(const char *key, const char *v, char *buf, size_t len)
{
	if (!v[0] || strlen(v) >= len) {
		fprintf(stderr, "ccomd: %s must be 1 to %zu characters\n", key, len - 1);
		return -EINVAL;
	}
	strcpy(buf, v);
	return 0;
}

/* Apply one setting (from a file or an option); 0 or -EINVAL with a message. */
static int ccomd_set(struct ccomd_config *c, const char *key, const char *v)
{
	int flag;

	if (!strcmp(key, "listen"))
		return set_str(key, v, c->listen, sizeof(c->listen));
	if (!strcmp(key, "dir"))
		return set_str(key, v, c->pubdir, sizeof(c->pubdir));
	if (!strcmp(key, "interval_ms"))
		return set_int(key, v, 50, 3600000, &c->interval_ms);
	if (!strcmp(key, "peer_timeout_ms"))
		return set_int(key, v, 10, 600000, &c->peer_timeout_ms);
	if (!strcmp(key, "clean_stale")) {
		if (set_int(key, v, 0, 1, &flag))
			return -EINVAL;
		c->clean_stale = flag;
		return 0;
	}
	if (!strcmp(key, "peers")) {
		c->npeers = job_parse_peers(v, c->peers);
		if (c->npeers >= 0)
			return 0;
		fprintf(stderr, "ccomd: peers must be HOST:PORT[,HOST:PORT...] (at most %d)\n",
			JOB_MAX_PEERS);
		return -EINVAL;
	}
	fprintf(stderr, "ccomd: unknown setting \"%s\"\n", key);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int ccomd_config_file(struct ccomd_config *c, const char *path)
{
	char line[1024], *eq, *key;
	int lineno = 0, err = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "ccomd: cannot open config %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		key = trim(line);
		if (!key[0] || key[0] == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			fprintf(stderr, "ccomd: %s:%d: expected key = value\n", path, lineno);
			err = -EINVAL;
			break;
		}
		*eq = '\0';
		err = ccomd_set(c, trim(key), trim(eq + 1));
		if (err)
			fprintf(stderr, "ccomd: in %s line %d\n", path, lineno);
	}
	fclose(f);
	return err;
}

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "dir", required_argument, NULL, 'd' },
	{ "peers", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'c' },
	{ "interval", required_argument, NULL, 'i' },
	{ "peer-timeout", required_argument, NULL, 't' },
	{ "clean-stale", no_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Config file first, then the options, so that the command line wins. */
static int ccomd_parse(struct ccomd_config *c, int argc, char **argv)
{
	static const char *const keys[] = { ['l'] = "listen", ['d'] = "dir", ['p'] = "peers",
					    ['i'] = "interval_ms", ['t'] = "peer_timeout_ms" };
	int opt;

	while ((opt = getopt_long(argc, argv, "l:d:p:c:i:t:Ch", long_opts, NULL)) != -1)
		if (opt == 'c' && ccomd_config_file(c, optarg))
			return -EINVAL;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:d:p:c:i:t:Ch", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			break;
		case 'C':
			c->clean_stale = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'l': case 'd': case 'p': case 'i': case 't':
			if (ccomd_set(c, keys[opt], optarg))
				return -EINVAL;
			break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ccomd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	ccomd_stop = 1;
}

/*
 * The daemon's state with its defaults; NULL if out of memory.  It is never
 * freed: the events thread is detached and may use it until the process
 * exits.
 */
static struct ccomd *ccomd_create(void)
{
	const char *env = getenv("CCOM_PUBLISH_DIR");
	struct ccomd *d = calloc(1, sizeof(*d));

	if (!d) {
		fprintf(stderr, "ccomd: out of memory for the daemon state (%zu bytes)\n",
			sizeof(*d));
		return NULL;
	}
	snprintf(d->cfg.listen, sizeof(d->cfg.listen), "%s", CCOMD_DEFAULT_LISTEN);
	snprintf(d->cfg.pubdir, sizeof(d->cfg.pubdir), "%s",
		 env && env[0] ? env : CCOM_PUB_DEFAULT_DIR);
	d->cfg.interval_ms = 1000;
	d->cfg.peer_timeout_ms = 2000;
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec ts;
	struct ccomd *d;

	d = ccomd_create();
	if (!d)
		return 1;
	if (ccomd_parse(&d->cfg, argc, argv))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ccomd_state_scan(d);
	if (ccomd_web_start(d))
		return 1;
	if (ccomd_events_start(d))
		fprintf(stderr, "ccomd: events thread not started; continuing without driver events\n");
	fprintf(stderr, "ccomd: listening on http://%s (state %s, %d peers)\n", d->cfg.listen,
		d->cfg.pubdir, d->cfg.npeers);
	while (!ccomd_stop) {
		ts.tv_sec = d->cfg.interval_ms / 1000;
		ts.tv_nsec = (long)(d->cfg.interval_ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		if (!ccomd_stop)
			ccomd_state_scan(d);
	}
	ccomd_web_stop(d);
	fprintf(stderr, "ccomd: stopped\n");
	return 0;
}
