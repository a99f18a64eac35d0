// SPDX-License-Identifier: MIT
/*
 * http.c - the GET that ccomctl and ccomd make of a ccomd's JSON endpoints
 * (http.h), on libcurl: one easy handle per request, an HTTP/1.0 GET as
 * the hand-written client sent, a connect timeout and a total timeout both
 * set to the caller's deadline, IPv4 and IPv6 (a "[v6]:port" address is a
 * URL literal; a host name is tried on each of its addresses), no proxy
 * from the environment, no redirects, and the body collected in memory up
 * to HTTP_MAX_BODY.  libcurl's result is mapped back to the errnos the
 * callers print (strerror()), so that messages stay "Connection refused",
 * "Connection timed out"...
 *
 * libcurl is loaded with dlopen() at the first request, not linked: with
 * its ~30 libraries (OpenSSL, nghttp2, LDAP, Kerberos...) every start of
 * ccomctl took ~10 ms longer on the host and ~0.45 s longer in the TCG
 * guest of the VM tests (0.58 s instead of 0.12 s per `ccomctl -V`), for
 * the one command (`job` with peers) that uses HTTP.  The prototypes are
 * checked against curl/curl.h through typeof.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "http.h"

/* The body as it arrives; @over is set when it would pass HTTP_MAX_BODY. */
struct http_body {
	char *data;
	size_t len;
	size_t cap;
	bool over;
};

/**
 * struct http_curl - the libcurl entry points, resolved once
 * @ok: every entry point was found and curl_global_init() succeeded
 * @global_init: curl_global_init()
 * @easy_init: curl_easy_init()
 * @easy_setopt: curl_easy_setopt()
 * @easy_perform: curl_easy_perform()
 * @easy_getinfo: curl_easy_getinfo()
 * @easy_cleanup: curl_easy_cleanup()
 */
struct http_curl {
	bool ok;
	typeof(curl_global_init) *global_init;
	typeof(curl_easy_init) *easy_init;
	typeof(curl_easy_setopt) *easy_setopt;
	typeof(curl_easy_perform) *easy_perform;
	typeof(curl_easy_getinfo) *easy_getinfo;
	typeof(curl_easy_cleanup) *easy_cleanup;
};

/* Written once under http_once, read-only afterwards. */
static struct http_curl curl;
static pthread_once_t http_once = PTHREAD_ONCE_INIT;

/*
 * Load libcurl (Debian's OpenSSL flavour, else the GnuTLS one) and run
 * curl_global_init() once per process, before any handle: ccomd's request
 * threads may race here, pthread_once() orders them.
 */
static void http_init(void)
{
	static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
	void *lib = NULL;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s: cannot load libcurl.so.4 (%s); install the libcurl4 package\n",
			program_invocation_short_name, dlerror());
		return;
	}
	curl.global_init = (typeof(curl.global_init))dlsym(lib, "curl_global_init");
	curl.easy_init = (typeof(curl.easy_init))dlsym(lib, "curl_easy_init");
	curl.easy_setopt = (typeof(curl.easy_setopt))dlsym(lib, "curl_easy_setopt");
	curl.easy_perform = (typeof(curl.easy_perform))dlsym(lib, "curl_easy_perform");
	curl.easy_getinfo = (typeof(curl.easy_getinfo))dlsym(lib, "curl_easy_getinfo");
	curl.easy_cleanup = (typeof(curl.easy_cleanup))dlsym(lib, "curl_easy_cleanup");
	if (!curl.global_init || !curl.easy_init || !curl.easy_setopt || !curl.easy_perform ||
	    !curl.easy_getinfo || !curl.easy_cleanup) {
		fprintf(stderr, "%s: the loaded libcurl lacks curl_easy_* entry points; reinstall the libcurl4 package\n",
			program_invocation_short_name);
		return;
	}
	curl.ok = curl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	if (!curl.ok)
		fprintf(stderr, "%s: curl_global_init() failed (out of memory?)\n",
			program_invocation_short_name);
}

/*
 * Split "host:port" / "[v6]:port" as the hand-written client did (the last
 * ':' ends the host unless it is bracketed) into @host and @port; the port
 * must be numeric.  0 or -EINVAL.
 */
static int http_split(const char *hp, char *host, size_t hlen, const char **port)
{
	const char *colon, *h = hp;
	size_t n;

	if (hp[0] == '[') {
		colon = strstr(hp, "]:");
		h = hp + 1;
	} else {
		colon = strrchr(hp, ':');
	}
	if (!colon || colon == h)
		return -EINVAL;
	n = (size_t)(colon - h);
	if (n >= hlen)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = colon + (hp[0] == '[' ? 2 : 1);
	n = strlen(*port);
	if (n == 0 || n > 5 || strspn(*port, "0123456789") != n)
		return -EINVAL;
	return 0;
}

/*
 * The URL of @path on @hp.  An IPv6 address (any host with a ':', bracketed
 * or not) becomes a bracketed URL literal, and the '%' of its zone id
 * ("fe80::1%eth0") is written "%25", as URLs want it.  0 or -EINVAL.
 */
static int http_url(const char *hp, const char *path, char *url, size_t len)
{
	char host[256], esc[3 * sizeof(host)];
	const char *port, *s;
	size_t n = 0;
	bool v6;
	int err;

	err = http_split(hp, host, sizeof(host), &port);
	if (err)
		return err;
	v6 = strchr(host, ':') != NULL;
	for (s = host; *s; s++) {
		if (*s == '%') {
			memcpy(esc + n, "%25", 3);
			n += 3;
		} else {
			esc[n++] = *s;
		}
	}
	esc[n] = '\0';
	n = (size_t)snprintf(url, len, "http://%s%s%s:%s%s", v6 ? "[" : "", esc, v6 ? "]" : "",
			     port, path);
	return n < len ? 0 : -EINVAL;
}

static size_t http_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct http_body *b = arg;
	size_t n = size * nmemb, cap;
	char *v;

	if (b->len + n > HTTP_MAX_BODY) {
		b->over = true;
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 8192;
		while (cap < b->len + n + 1)
			cap *= 2;
		v = realloc(b->data, cap);
		if (!v)
			return 0;	/* CURLE_WRITE_ERROR without @over: no memory */
		b->data = v;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* libcurl's result as the errno the hand-written client returned. */
static int http_errno(CURL *h, CURLcode rc, const struct http_body *b)
{
	long oserr = 0;

	switch (rc) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_FILESIZE_EXCEEDED:
		return -EMSGSIZE;
	case CURLE_WRITE_ERROR:
		return b->over ? -EMSGSIZE : -ENOMEM;
	case CURLE_URL_MALFORMAT:
		return -EINVAL;
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_GOT_NOTHING:
		return -EPROTO;	/* not an HTTP reply */
	default:
		/* Connect, send and receive failures carry the socket's errno. */
		if (curl.easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr) == CURLE_OK && oserr > 0)
			return (int)-oserr;
		return rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
	}
}

/* The options of one request; false if libcurl refused one (no memory). */
static bool http_setup(CURL *h, const char *url, long timeout_ms, struct http_body *b)
{
	return curl.easy_setopt(h, CURLOPT_URL, url) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http") == CURLE_OK &&
	       /* "" ignores http_proxy and friends: ccomd peers are reached directly. */
	       curl.easy_setopt(h, CURLOPT_PROXY, "") == CURLE_OK &&
	       /* No SIGALRM for resolver timeouts: ccomd calls this from many threads. */
	       curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_WHATEVER) == CURLE_OK &&
	       /* The request the hand-written client sent: HTTP/1.0, one per connection. */
	       curl.easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_0) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HTTP_MAX_BODY) ==
		       CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, http_write) == CURLE_OK &&
	       curl.easy_setopt(h, CURLOPT_WRITEDATA, b) == CURLE_OK;
}

int http_get(const char *hostport, const char *path, int timeout_ms, char **body, int *status)
{
	struct http_body b = { 0 };
	char url[1024];
	long code = 0;
	CURLcode rc;
	CURL *h;
	int err;

	*body = NULL;
	*status = 0;
	err = http_url(hostport, path, url, sizeof(url));
	if (err)
		return err;
	if (pthread_once(&http_once, http_init) || !curl.ok)
		return -ELIBACC;
	h = curl.easy_init();
	if (!h)
		return -ENOMEM;
	if (!http_setup(h, url, timeout_ms > 0 ? timeout_ms : 1, &b)) {
		err = -ENOMEM;
		goto out;
	}
	rc = curl.easy_perform(h);
	err = http_errno(h, rc, &b);
	/* The status of a reply that came (0 if none, or not HTTP). */
	if ((!err || err == -EPROTO) &&
	    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
		*status = (int)code;
	if (!err && code != 200)
		err = -EPROTO;
	if (!err && !b.data) {
		/* An empty 200 body: still a NUL-terminated string for the caller. */
		b.data = calloc(1, 1);
		if (!b.data)
			err = -ENOMEM;
	}
out:
	curl.easy_cleanup(h);
	if (err) {
		free(b.data);
		return err;
	}
	*body = b.data;
	return 0;
}
