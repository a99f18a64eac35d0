// SPDX-License-Identifier: MIT
/*
 * misc.c - time, hashing, random bytes and rank-list formatting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "util/misc.h"

int64_t ccom_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint64_t ccom_hash_bytes(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = seed ? seed : 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t ccom_hash_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int ccom_sleep_us(int64_t us, const atomic_int *abort)
{
	int64_t end = ccom_now_us() + us;

	for (;;) {
		int64_t left = end - ccom_now_us();
		struct timespec ts;

		if (abort && atomic_load(abort))
			return -ECANCELED;
		if (left <= 0)
			return 0;
		if (left > 50000)
			left = 50000;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1000;
		nanosleep(&ts, NULL);
	}
}

int ccom_random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(p + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* No guessable fallback: ids, secrets and nonces must be unpredictable. */
			ccom_set_last_error("getrandom() failed (%s); check the kernel's random source (a seccomp filter, a very old kernel)",
					    n < 0 ? strerror(errno) : "no bytes");
			explicit_bzero(buf, len);
			return -EIO;
		}
		got += n;
	}
	return 0;
}

void ccom_format_rank_list(const unsigned char *flags, int n, int want, char *buf, size_t len)
{
	size_t o = 0;
	int i = 0;

	buf[0] = '\0';
	while (i < n) {
		int j;
		int w;

		if (!!flags[i] != !!want) {
			i++;
			continue;
		}
		for (j = i; j + 1 < n && !!flags[j + 1] == !!want; j++)
			;
		if (j == i)
			w = snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
		else
			w = snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", i, j);
		if (w < 0 || (size_t)w >= len - o) {
			if (len > 4)
				snprintf(buf + len - 4, 4, "...");
			return;
		}
		o += w;
		i = j + 1;
	}
}

void ccom_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

void ccom_host_identity(const char *hostid, char *buf, size_t len)
{
	char host[256] = "", boot[64];

	if (hostid) {
		snprintf(buf, len, "id:%s", hostid);
		return;
	}
	gethostname(host, sizeof(host) - 1);
	ccom_boot_id(boot, sizeof(boot));
	snprintf(buf, len, "host:%s/%s", host, boot);
}
