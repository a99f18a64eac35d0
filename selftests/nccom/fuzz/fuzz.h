/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: shared declarations of the nccom fuzzer (nccom_fuzz.c: the
 * ioctl/mmap/ring/fd-passing workers and the parent; fuzz_nl.c: the generic
 * netlink workers): the seeded PRNG, the statistics block shared by all
 * processes (MAP_SHARED, written with atomics) and the finding reporter.
 */
#ifndef NCCOM_FUZZ_H
#define NCCOM_FUZZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Result slots of the coverage table: 0 = success, 1..FZ_NERR-1 = errno. */
#define FZ_NERR 160
#define FZ_NIOCTL 32	/* ioctl commands (index = nr - NCCOM_CMD_BASE), + extras */
#define FZ_NDESC 8	/* descriptor opcodes (+ one slot for invalid ones) */
#define FZ_NNL 16	/* netlink commands */
#define FZ_MAXWORKERS 32

/* Pseudo-commands of the coverage table beyond the real ioctls. */
enum {
	FZ_X_MMAP = 20,
	FZ_X_MREMAP,
	FZ_X_SEMFD_READ,
	FZ_X_SEMFD_WRITE,
	FZ_X_FD_POLL,
	FZ_X_BADCMD,
	FZ_X_DMABUF_MMAP,
	FZ_X_PROCFD,
};

struct fz_worker_stat {
	uint64_t ops;
	uint64_t findings;
	uint32_t pid;
	uint32_t cur_op;	/* what it is doing now, for hang reports */
	uint32_t uid;
	uint32_t alive;
};

struct fz_shared {
	uint64_t ops;		/* all operations of all processes */
	uint64_t kills;		/* processes killed by SIGKILL while working */
	uint64_t findings;
	uint64_t descs;		/* descriptors submitted */
	uint64_t cqes;		/* completions checked against the model */
	uint64_t isolation;	/* cross-uid / cross-fd accesses asserted to fail */
	uint64_t fds_passed;
	uint64_t nl_msgs;
	uint64_t failnth;	/* times the driver's fail_nth knob was armed */
	uint64_t t0_ms;		/* CLOCK_MONOTONIC start of the run, for finding times */
	uint32_t ioctl_cov[FZ_NIOCTL][FZ_NERR];
	uint32_t desc_cov[FZ_NDESC][FZ_NERR];
	uint32_t nl_cov[FZ_NNL][FZ_NERR];
	struct fz_worker_stat w[FZ_MAXWORKERS];
};

extern struct fz_shared *fz_sh;
extern int fz_slot;		/* this worker's index in fz_sh->w */
extern int fz_verbose;

struct fz_rng {
	uint64_t s;
};

/* splitmix64: one 64-bit state, good enough and fully reproducible. */
static inline uint64_t fz_next(struct fz_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n == 0 gives 0. */
static inline uint64_t fz_rnd(struct fz_rng *r, uint64_t n)
{
	return n ? fz_next(r) % n : 0;
}

static inline bool fz_chance(struct fz_rng *r, unsigned int pct)
{
	return fz_rnd(r, 100) < pct;
}

static inline uint64_t fz_mix(uint64_t a, uint64_t b)
{
	struct fz_rng r = { a ^ (b * 0x2545f4914f6cdd1dULL) };

	return fz_next(&r);
}

static inline int fz_errslot(int rc, int err)
{
	if (rc >= 0)
		return 0;
	return err > 0 && err < FZ_NERR ? err : FZ_NERR - 1;
}

static inline void fz_count(uint32_t *slot)
{
	__atomic_fetch_add(slot, 1, __ATOMIC_RELAXED);
}

static inline void fz_add(uint64_t *v, uint64_t n)
{
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

uint64_t fz_now_ms(void);
void fz_finding(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fz_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fuzz_nl.c: one netlink worker's run of @iters operations. */
int fz_nl_worker(uint64_t seed, uint64_t iters);

#endif /* NCCOM_FUZZ_H */
