/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: the private header of the nccom fuzzer. For all its
 * processes: the seeded PRNG, the statistics block shared by them
 * (MAP_SHARED, written with atomics) and the finding reporter
 * (nccom_fuzz.c, the parent). For the ioctl workers: the model of a
 * worker's fds, objects, rings and exported fds and the worker state
 * (fuzz_model.c, fuzz_worker.c), the ioctl table and mutations
 * (fuzz_ioctl.c) and the operations (fuzz_ops.c: ioctls; fuzz_ring.c:
 * rings and descriptors; fuzz_fdpass.c: exported fds and fd passing;
 * fuzz_isolation.c: the probes with the peer's numbers). For the netlink
 * workers: fz_nl_worker() (fuzz_nl.c).
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

/* ---- the ioctl workers (fuzz_worker.c and the files it calls) ------------ */

#define DEV "/dev/nccom"
#define PG 4096UL
#define MAXFDS 3
#define MAXOBJ 40
#define MAXBUF 6
#define MAXQ 4
#define MAXX 12
#define ARGBUF 8192	/* argument buffer: struct + room for larger sizes */

/* ---- the ioctl workers' model (fuzz_model.c) ---------------------------- */

enum otype { O_FREE, O_MEM, O_QUEUE, O_SEM, O_COMM };

struct fobj {
	uint32_t h;
	int type;
	uint64_t len;		/* O_MEM: window length */
	uint32_t access;	/* O_MEM */
	int buf;		/* O_MEM registration: backing buffer, else -1 */
	bool remote;		/* O_MEM/O_SEM imported from another process */
	bool owner;		/* O_SEM created here */
	uint64_t semval;	/* O_SEM owner: current value */
	int q;			/* O_QUEUE: index in fz_w.q */
};

struct ffd {
	int fd;			/* -1: slot unused */
	uint32_t epoch;		/* bumped by anything that changes descriptor outcomes */
	uint32_t created;	/* objects created: invalidates "no such handle" */
	struct fobj o[MAXOBJ];
};

struct fbuf {
	uint8_t *p;		/* NULL: slot unused */
	size_t len;
};

/* What the model expects of one descriptor. */
struct fexp {
	int want;		/* 0 or an errno the completion must carry */
	bool any;		/* sem descriptors: any status */
	uint32_t epoch;		/* the fd's epoch at submission */
	uint32_t created;	/* the fd's creation count at submission */
	uint8_t op;
};

struct fq {
	bool used;
	int fdi;
	uint32_t h;
	uint8_t *map;		/* NULL: not mapped */
	size_t mapsz;
	uint64_t off;
	uint32_t depth, sq_off, cq_off;
	uint32_t tail;		/* our sq_tail */
	uint32_t head;		/* our cq_head */
	uint32_t nexp;		/* cookies issued */
	bool chaos;		/* header corrupted: no more oracle on this queue */
	struct fexp *exp;	/* 2 * depth entries, indexed by cookie */
};

enum xkind { X_DMABUF = 1, X_SEM };

struct xfd {
	int fd;			/* -1: unused */
	int kind;
	uint64_t len;		/* X_DMABUF: size */
	uint32_t access;	/* X_DMABUF: registration's access, | X_MAP_WRITE */
};

#define X_MAP_WRITE (1u << 8)	/* exported with NCCOM_MEM_EXPORT_MAP_WRITE */

/* The message a worker sends its peer, with at most one fd. */
struct fz_msg {
	uint32_t kind;		/* enum xkind, 0 = no fd */
	uint32_t access;
	uint64_t len;
	uint32_t uid;
	uint32_t pid;
	uint32_t handles[8];	/* handle numbers live in the sender's fds */
	uint64_t mmap_off[2];	/* the sender's queue mmap offsets */
	int32_t fdnums[4];	/* fd numbers open in the sender */
};

/* One ioctl worker's state (fuzz_worker.c); each worker process has its own. */
struct fz_wstate {
	struct fz_rng r;
	struct ffd f[MAXFDS];
	struct fbuf b[MAXBUF];
	struct fq q[MAXQ];
	struct xfd x[MAXX];
	int sock_next, sock_prev;
	uint64_t op;
	uint64_t kill_at;
	uint32_t ndevs;
	uint64_t max_reg;
	uint8_t *arg;		/* ARGBUF bytes, followed by a PROT_NONE page */
	struct fz_msg peer;	/* last message from the previous worker */
	bool have_peer;
};

extern struct fz_wstate fz_w;

/* ---- the ioctl table and the generic mutations (fuzz_ioctl.c) ----------- */

struct fz_ioc {
	const char *name;
	unsigned long cmd;
	uint32_t size;
	uint32_t min;
	uint32_t flags_ok;	/* valid flag bits (any non-empty subset for MEM flags) */
	int resv[3];		/* offsets of __u32 reserved members, -1 = none */
};

#define FZ_NIOC 17	/* entries of fz_iocs[]: GET_INFO .. COMM_REGISTER */

extern const struct fz_ioc fz_iocs[FZ_NIOC];

enum mut {
	M_NONE,		/* valid (as far as the caller built it) */
	M_SMALL,	/* size below the minimum: EINVAL */
	M_BIGZERO,	/* size above the struct, zero tail: like M_NONE */
	M_BIGTAIL,	/* size above the struct, non-zero tail: E2BIG */
	M_FLAGS,	/* an unknown flag bit: EINVAL */
	M_RESV,		/* a reserved member non-zero: EINVAL */
	M_BADPTR,	/* the argument pointer is not accessible: EFAULT */
	M_CUTPTR,	/* struct straddles an inaccessible page: EFAULT */
	M_NMUT
};

/*
 * fuzz_ioctl.c. fz_xioctl() issues ioctl @idx of fz_iocs[] with the struct
 * in @s, already valid or semantically mutated by the caller, who expects
 * @want (0: success or a model-unpredictable error; > 0: exactly this
 * errno; < 0: any failure), with mutation @m on top; checks and counts the
 * result; returns ioctl()'s result with errno set. The cov functions count
 * one result of a call (real or pseudo command @idx) in the coverage table.
 */
void fz_cov_ioctl(unsigned int idx, int rc, int err);
void fz_cov_x(int idx, int rc, int err);
bool fz_documented(int e);
bool fz_resource_err(int e);
enum mut fz_pick_mut(const struct fz_ioc *d);
int fz_xioctl(int fd, unsigned int idx, void *s, enum mut m, int want, const char *what);

/*
 * fuzz_model.c. The pickers draw from fz_w.r; the obj_ functions work on
 * fd slot @fi of fz_w.f; NULL or -1: nothing of that kind is live.
 */
struct fobj *fz_obj_find(int fi, uint32_t h);
struct fobj *fz_track(int fi, uint32_t h, int type);
int fz_nobj(int fi);
struct fobj *fz_obj_pick(int fi, int type);
int fz_fd_pick(void);
uint32_t fz_bad_handle(int fi, int type);
void fz_epoch_bump_all(void);
void fz_x_add(int fd, int kind, uint64_t len, uint32_t access);
struct xfd *fz_x_pick(int kind);
int fz_bad_fd(bool *closed);
void fz_buf_new(void);
void fz_buf_drop(void);
void fz_op_open(void);
void fz_q_forget(int qi);
void fz_op_close(int fi);

/* fuzz_ops.c: the ioctl operations on fd slot @fi. */
void fz_op_get_info(int fi);
void fz_op_destroy(int fi);
void fz_op_mem_register(int fi);
void fz_op_mem_export(int fi);
void fz_op_mem_import(int fi);
void fz_op_queue_create(int fi);
void fz_op_queue_misc(int fi);
void fz_op_sem(int fi);
void fz_op_comm(int fi);
void fz_op_raw(int fi);

/* fuzz_ring.c: mmap/munmap of rings, descriptors, completions. */
void fz_op_mmap(void);
void fz_op_unmap(void);
void fz_reap(struct fq *q, int fi);
void fz_op_submit(void);

/* fuzz_fdpass.c and fuzz_isolation.c: exported fds, the peer socket, the probes. */
void fz_op_xfd(void);
void fz_op_send(void);
void fz_op_recv(int fi);
void fz_probe_peer(int fi, const struct fz_msg *m);

/* fuzz_worker.c: one ioctl worker's run of @iters operations; the knob off. */
int fz_worker(uint64_t seed, uint64_t iters, bool may_kill);
void fz_failnth_off(void);

/* fuzz_nl.c: one netlink worker's run of @iters operations. */
int fz_nl_worker(uint64_t seed, uint64_t iters);

#endif /* NCCOM_FUZZ_H */
