// SPDX-License-Identifier: MIT
/*
 * web.c - ccomd's HTTP endpoints on libmicrohttpd (one thread per
 * connection, so that /v1/job may query peers, even this daemon itself,
 * without blocking other requests):
 *   GET /metrics            Prometheus text
 *   GET /v1/comms           JSON array of this host's ranks (?all=1: stale too)
 *   GET /v1/comm/<hash>     JSON array of this host's ranks of one communicator
 *   GET /v1/job/<hash>      JSON summary over this host and the peers, with the
 *                           op-level localisation ("hang")
 *   GET /v1/flight/<hash>   JSON array: the flight recorder of each live rank
 *                           of one communicator on this host
 *   GET /v1/events          JSON array of recent driver events
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "ccomd.h"

/* A response built in a memstream; the body is freed by libmicrohttpd. */
struct web_buf {
	char *data;
	size_t len;
	FILE *f;
};

static int web_buf_open(struct web_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->f = open_memstream(&b->data, &b->len);
	return b->f ? 0 : -ENOMEM;
}

static enum MHD_Result web_send(struct MHD_Connection *conn, struct web_buf *b,
				unsigned int status, const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (fclose(b->f)) {
		free(b->data);
		return MHD_NO;
	}
	r = MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(b->data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result web_error(struct MHD_Connection *conn, unsigned int status,
				 const char *msg)
{
	struct web_buf b;
	struct pr p;

	if (web_buf_open(&b))
		return MHD_NO;
	pr_init(&p, b.f, true, false);
	pr_open_object(&p, NULL);
	pr_str(&p, "error", "%s", msg);
	pr_close_object(&p);
	return web_send(conn, &b, status, "application/json");
}

static void web_local(struct ccomd *d, struct member_list *l)
{
	if (ccomd_members(d, false, l))
		fprintf(stderr, "ccomd: cannot read %s\n", d->cfg.pubdir);
}

static enum MHD_Result web_comms(struct ccomd *d, struct MHD_Connection *conn, const char *hash_s)
{
	const char *all_s = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "all");
	bool all = hash_s || (all_s && !strcmp(all_s, "1"));
	struct member_list l = { 0 };
	struct web_buf b;
	uint64_t hash = 0;
	struct pr p;
	size_t i;

	if (hash_s && job_parse_hash(hash_s, &hash))
		return web_error(conn, MHD_HTTP_BAD_REQUEST, "the hash must be hexadecimal");
	if (web_buf_open(&b))
		return MHD_NO;
	web_local(d, &l);
	member_sort(&l);
	pr_init(&p, b.f, true, false);
	pr_open_array(&p, NULL);
	for (i = 0; i < l.n; i++)
		if ((all || l.v[i].alive) && (!hash_s || l.v[i].hash == hash))
			member_line(&p, &l.v[i]);
	pr_close_array(&p);
	member_list_free(&l);
	return web_send(conn, &b, MHD_HTTP_OK, "application/json");
}

static enum MHD_Result web_job(struct ccomd *d, struct MHD_Connection *conn, const char *hash_s)
{
	struct job_peer peers[JOB_MAX_PEERS];
	struct member_list l = { 0 };
	struct web_buf b;
	uint64_t hash;
	struct pr p;
	int i, n;

	if (job_parse_hash(hash_s, &hash))
		return web_error(conn, MHD_HTTP_BAD_REQUEST, "the hash must be hexadecimal");
	n = d->cfg.npeers;
	memcpy(peers, d->cfg.peers, sizeof(peers[0]) * (size_t)n);
	web_local(d, &l);
	for (i = 0; i < n; i++)
		job_fetch_peer(&peers[i], hash, d->cfg.peer_timeout_ms, &l);
	job_filter(&l, hash);
	if (web_buf_open(&b)) {
		member_list_free(&l);
		return MHD_NO;
	}
	pr_init(&p, b.f, true, false);
	job_print(&p, hash, &l, peers, n);
	member_list_free(&l);
	return web_send(conn, &b, MHD_HTTP_OK, "application/json");
}

/*
 * The configured peers, so that `ccomctl job` on this host reaches the same
 * hosts without being told them again (one list per host, in ccomd.conf).
 */
static enum MHD_Result web_peers(struct ccomd *d, struct MHD_Connection *conn)
{
	struct web_buf b;
	struct pr p;
	int i;

	if (web_buf_open(&b))
		return MHD_NO;
	pr_init(&p, b.f, true, false);
	pr_open_array(&p, NULL);
	for (i = 0; i < d->cfg.npeers; i++)
		pr_str(&p, NULL, "", d->cfg.peers[i].addr);
	pr_close_array(&p);
	return web_send(conn, &b, MHD_HTTP_OK, "application/json");
}

static int web_flight_one(const struct member *m, const struct member_op *ops, size_t n,
			  void *arg)
{
	member_flight(arg, m, ops, n);
	return 0;
}

static enum MHD_Result web_flight(struct ccomd *d, struct MHD_Connection *conn, const char *hash_s)
{
	struct web_buf b;
	uint64_t hash;
	struct pr p;
	int rc;

	if (job_parse_hash(hash_s, &hash))
		return web_error(conn, MHD_HTTP_BAD_REQUEST, "the hash must be hexadecimal");
	if (web_buf_open(&b))
		return MHD_NO;
	pr_init(&p, b.f, true, false);
	pr_open_array(&p, NULL);
	rc = pubdir_flight(d->cfg.pubdir, hash, web_flight_one, &p);
	pr_close_array(&p);
	if (rc < 0) {
		fclose(b.f);
		free(b.data);
		return web_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "cannot read the published state directory");
	}
	return web_send(conn, &b, MHD_HTTP_OK, "application/json");
}

static enum MHD_Result web_handler(void *cls, struct MHD_Connection *conn, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_size, void **state)
{
	struct ccomd *d = cls;
	struct web_buf b;
	struct pr p;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)state;
	if (strcmp(method, "GET"))
		return web_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is supported");
	pthread_mutex_lock(&d->lock);
	d->requests++;
	pthread_mutex_unlock(&d->lock);
	if (!strcmp(url, "/metrics")) {
		if (web_buf_open(&b))
			return MHD_NO;
		ccomd_metrics(d, b.f);
		return web_send(conn, &b, MHD_HTTP_OK, "text/plain; version=0.0.4");
	}
	if (!strcmp(url, "/v1/comms"))
		return web_comms(d, conn, NULL);
	if (!strncmp(url, "/v1/comm/", 9))
		return web_comms(d, conn, url + 9);
	if (!strncmp(url, "/v1/job/", 8))
		return web_job(d, conn, url + 8);
	if (!strncmp(url, "/v1/flight/", 11))
		return web_flight(d, conn, url + 11);
	if (!strcmp(url, "/v1/peers"))
		return web_peers(d, conn);
	if (!strcmp(url, "/v1/events")) {
		if (web_buf_open(&b))
			return MHD_NO;
		pr_init(&p, b.f, true, false);
		ccomd_events_print(d, &p);
		return web_send(conn, &b, MHD_HTTP_OK, "application/json");
	}
	return web_error(conn, MHD_HTTP_NOT_FOUND,
			 "unknown path; try /metrics, /v1/comms, /v1/comm/HASH, /v1/job/HASH, /v1/flight/HASH, /v1/peers, /v1/events");
}

/* "a.b.c.d:port" or "[v6]:port" into @ss; 0 or -EINVAL. */
static int web_addr(const char *s, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	char host[64];
	const char *colon;
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	*v6 = s[0] == '[';
	colon = *v6 ? strstr(s, "]:") : strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s + *v6, (size_t)(colon - s) - *v6);
	host[colon - s - *v6] = '\0';
	colon += *v6 ? 2 : 1;
	port = strtol(colon, &end, 10);
	if (*end || end == colon || port < 1 || port > 65535)
		return -EINVAL;
	if (*v6) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host, &a6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a4->sin_addr) == 1 ? 0 : -EINVAL;
}

int ccomd_web_start(struct ccomd *d)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ERROR_LOG;
	struct sockaddr_storage ss;
	bool v6;

	if (web_addr(d->cfg.listen, &ss, &v6)) {
		fprintf(stderr, "ccomd: listen address \"%s\" is not IPV4:PORT or [IPV6]:PORT\n",
			d->cfg.listen);
		return -EINVAL;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	d->web = MHD_start_daemon(flags, 0, NULL, NULL, web_handler, d,
				      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				      MHD_OPTION_CONNECTION_LIMIT, 64U,
				      MHD_OPTION_CONNECTION_TIMEOUT, 10U,
				      MHD_OPTION_END);
	if (!d->web) {
		fprintf(stderr, "ccomd: cannot listen on %s (address in use or not local?)\n",
			d->cfg.listen);
		return -EADDRINUSE;
	}
	return 0;
}

void ccomd_web_stop(struct ccomd *d)
{
	if (d->web)
		MHD_stop_daemon(d->web);
	d->web = NULL;
}
