/* SPDX-License-Identifier: MIT */
/*
 * misc.h - small helpers shared by every layer: monotonic time, hashing,
 * abortable sleeps.
 */
#ifndef CCOM_UTIL_MISC_H
#define CCOM_UTIL_MISC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CCOM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* CLOCK_MONOTONIC in microseconds. */
int64_t ccom_now_us(void);

/* 64-bit FNV-1a of @len bytes, continuing from @seed (use 0 to start). */
uint64_t ccom_hash_bytes(uint64_t seed, const void *data, size_t len);
/* Final avalanche mix of a 64-bit value (splitmix64). */
uint64_t ccom_hash_mix(uint64_t x);

/*
 * Sleep @us microseconds in short slices; returns -ECANCELED as soon as
 * *@abort becomes non-zero (@abort may be NULL), else 0.
 */
int ccom_sleep_us(int64_t us, const atomic_int *abort);

/*
 * Fill @buf with @len random bytes from getrandom() (retried on EINTR).
 * 0, or -EIO after ccom_set_last_error() (and @buf zeroed): there is no
 * fallback, a caller that needs the bytes fails.
 */
int ccom_random_bytes(void *buf, size_t len);

/* Format the ranks whose @flags[i] is zero as "1,3-5" into @buf (truncated with "..."). */
void ccom_format_rank_list(const unsigned char *flags, int n, int want, char *buf, size_t len);

/* This boot's id (/proc/sys/kernel/random/boot_id, no newline), "" if unreadable. */
void ccom_boot_id(char *buf, size_t len);

/*
 * This host's identity as text: "id:@hostid" when @hostid (CCOM_HOSTID) is
 * set, else "host:<host name>/<boot id>" (the boot id tells apart two
 * containers with one host name, and a machine from itself rebooted).
 */
void ccom_host_identity(const char *hostid, char *buf, size_t len);

#endif
