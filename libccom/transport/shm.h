/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the shared-memory segment of the ranks of one host.
 *
 * One memfd per communicator and host, created by the host's first rank and
 * passed to the others with SCM_RIGHTS.  It holds:
 *   - a header: the host doorbell (a futex word barrier waiters sleep
 *     on), the host barrier counter, and one control line per local rank
 *     (pid, "broken" flag set on abort or failure so peers stop waiting,
 *     and the rank's own doorbell, rung when it publishes LL words or
 *     moves a FIFO, so that a waiter sleeps on the one peer it needs);
 *   - the LL area: 2 sets x nlocal slots of 8-byte words (4 data bytes +
 *     4 flag bytes) for latency-bound operations;
 *   - the LL128 area: 2 sets x nlocal slots of cache lines (56 data bytes
 *     + a flag word each) for small and medium operations;
 *   - the staging area: 3 buffers x nlocal slots of CCOM_SHM_CHUNK bytes,
 *     where the direct engine (coll/direct.c) publishes pieces of its
 *     input so that every local rank can read them;
 *   - nlocal x nlocal FIFOs (head/tail on separate cache lines), the byte
 *     streams of the shm transport (transport/shm_fifo.c).
 *
 * Waiting: the segment is the wait source of its communicator
 * (proxy/wait.h): waits sleep on its doorbells, check the liveness of the
 * local peers (pidfd, broken flags) through it, and follow the spin policy
 * it set for this host.  A rank publishes the CPU it runs on; a waiter
 * whose peer last ran on the waiter's own CPU stops spinning at once (the
 * peer cannot run while it spins).
 */
#ifndef CCOM_TRANSPORT_SHM_H
#define CCOM_TRANSPORT_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/op.h"
#include "proxy/wait.h"

struct ccomComm;

#define CCOM_SHM_MAX_LOCAL 256
#define CCOM_SHM_LINE 64
#define CCOM_SHM_NBUF 3		/* staging buffers (see coll/direct.c) */
/*
 * An LL slot: CCOM_SHM_LL_HDR_WORDS words of the operation's signature
 * (ccom_shm_ll_sig_pack(), checked by every reader before the data), then
 * 16 KiB of payload; the slot stride stays a whole number of cache lines.
 */
#define CCOM_SHM_LL_HDR_WORDS 4
#define CCOM_SHM_LL_DATA_WORDS 4096	/* 16 KiB of LL payload per rank slot */
#define CCOM_SHM_LL_SLOT_WORDS (CCOM_SHM_LL_DATA_WORDS + 8)
#define CCOM_SHM_LL_MAX_BYTES (CCOM_SHM_LL_DATA_WORDS * 4)

/*
 * An LL128 slot (coll/ll128.c): whole cache lines, each 56 payload bytes
 * followed by a flag word stored after them (release); line 0 carries the
 * collective's signature (the board's two words, ccom_shm_sig_post())
 * before 40 payload bytes.  64 KiB of payload per rank slot.
 */
#define CCOM_SHM_LL128_LINE_DATA 56
#define CCOM_SHM_LL128_HDR_DATA 40
#define CCOM_SHM_LL128_MAX_BYTES (64u << 10)
#define CCOM_SHM_LL128_LINES \
	(1 + (CCOM_SHM_LL128_MAX_BYTES - CCOM_SHM_LL128_HDR_DATA + CCOM_SHM_LL128_LINE_DATA - 1) / \
	 CCOM_SHM_LL128_LINE_DATA)

struct ccom_shm_ll128_line {
	uint64_t data[7];
	_Atomic uint64_t flag;		/* the LL128 operation's sequence number, stored last */
};
_Static_assert(sizeof(struct ccom_shm_ll128_line) == CCOM_SHM_LINE, "one flag per cache line");


/* One local rank's control line. */
struct ccom_shm_ctl {
	_Atomic int32_t pid;
	_Atomic int32_t broken;		/* nonzero: aborted or failed, stop waiting on me */
	_Atomic int32_t departed;	/* left cleanly (destroy after its last op) */
	_Atomic int32_t culprit;	/* global rank that caused the failure */
	_Atomic int32_t reason;		/* enum ccom_shm_reason of the failure */
	struct ccom_bell bell;	/* rung when this rank publishes data */
	_Atomic int32_t cpu;		/* CPU this rank last ran on (waits read it) */
	/*
	 * Pieces this rank has staged for the flag-synchronised direct
	 * paths (coll/direct.c): a monotonic count, identical sequences on
	 * every rank, so a reader knows the value it waits for.
	 */
	_Atomic uint64_t staged;
	/*
	 * The mismatch board's two words of the collective whose pieces
	 * @staged counts (ccom_shm_staged_sig_post()): in the line a reader
	 * of @staged fetched anyway, so the one-shot checks every peer's
	 * call without another cache miss.
	 */
	_Atomic uint64_t staged_sig[2];
	char pad[CCOM_SHM_LINE - 56];
};
_Static_assert(sizeof(struct ccom_shm_ctl) == CCOM_SHM_LINE, "one control line per rank");

enum ccom_shm_reason { CCOM_SHM_FAILED = 1, CCOM_SHM_DIED = 2, CCOM_SHM_ABORTED = 3 };
/* Or'ed into CCOM_SHM_FAILED: the rank's op timed out (it is alive, not failed). */
#define CCOM_SHM_TIMEDOUT 4

/*
 * One local rank's buffers for the zero-copy direct path (coll/direct.c),
 * written by their owner at the start of every AllReduce that could take
 * that path, then published by bumping seq: index 0 is the send range, 1
 * the receive range.
 */
struct ccom_shm_zdesc {
	uint64_t serial[2];		/* ccomMemAlloc serial, 0: not ccomMemAlloc memory */
	uint64_t offset[2];		/* of the range in its buffer */
	uint64_t size[2];		/* of the whole buffer */
	uint64_t addr[2];		/* the range in the owner's address space */
	int32_t fd[2];			/* the buffer's memfd in the owner */
	_Atomic int32_t map_ok;		/* first use: this rank could map every peer's buffers */
	int32_t pad0;
	_Atomic uint64_t seq;		/* eligible AllReduces described so far (release) */
	uint64_t ino[2];		/* the memfd's inode: a mapper checks it opened that file */
	char pad[2 * CCOM_SHM_LINE - 104];
};
_Static_assert(sizeof(struct ccom_shm_zdesc) == 2 * CCOM_SHM_LINE, "two lines per rank");

/*
 * One local rank's part of the CMA path (coll/cma.c): its buffers of the
 * running operation (read by the peers after a host barrier), and the
 * first-use agreement: the address of a word the peers read with
 * process_vm_readv to prove they may, and whether this rank could read
 * every peer's (0 yes, else the errno it met).
 */
struct ccom_shm_cdesc {
	uint64_t addr[2];		/* send, receive range in the owner's address space */
	uint64_t probe;			/* address of the owner's probe word */
	uint64_t probe_val;		/* what the probe word holds */
	_Atomic int32_t err;		/* first use: 0, or the errno a peer's probe met */
	int32_t err_peer;		/* ... and that peer's local rank */
	_Atomic uint64_t best_ns[2];	/* CCOM_CMA=auto: best staged, CMA time of the decided size */
	int32_t zcopy;			/* the operation's buffers are ccomMemAlloc memory */
	int32_t recheck;		/* auto: 1 + index of a verdict to measure again, 0: none */
};
_Static_assert(sizeof(struct ccom_shm_cdesc) == CCOM_SHM_LINE, "one line per rank");

/*
 * The collective-mismatch board: each local rank posts the signature of
 * the collective it runs (core/op.h) into entry seq % CCOM_SHM_SIG_RING of
 * its row before running it; peers compare it with their own (see
 * ccom_shm_sig_post()).  @a and @b carry the low 16 bits of @seq in their
 * top bits, so a reader that acquired @seq knows whether they belong to
 * it (the owner stores @a, @b, then @seq with release) without a seqlock.
 */
#define CCOM_SHM_SIG_RING 8
struct ccom_shm_sig {
	_Atomic uint64_t seq;
	_Atomic uint64_t a;		/* tag << 48 | count (48 bits) */
	_Atomic uint64_t b;		/* tag << 48 | kind << 40 | dtype << 32 | op << 24 | root (24 bits) */
	uint64_t pad;
};
_Static_assert(sizeof(struct ccom_shm_sig) == 32, "two entries per line");

/*
 * The kdev race's placement words (coll/krace.c), one line per local rank:
 * whether this rank's call is in place, for the agreement before a path
 * is picked (two words used in turn: a rank that went on to its next
 * agreement does not overwrite the word a slower peer is still reading)
 * and for a check-in (read between the check-in's two barriers).
 */
struct ccom_shm_kplace {
	_Atomic int32_t agree[2];
	_Atomic int32_t checkin;
	char pad[CCOM_SHM_LINE - 12];
};
_Static_assert(sizeof(struct ccom_shm_kplace) == CCOM_SHM_LINE, "one line per rank");

struct ccom_shm_hdr {
	uint64_t magic;
	uint32_t nlocal;
	uint32_t pad0;
	uint64_t size;
	char pad1[CCOM_SHM_LINE - 24];
	/* Host doorbell: barrier completion, failures. */
	struct ccom_bell bell;
	char pad2[CCOM_SHM_LINE - 8];
	_Atomic uint64_t barrier;	/* monotonic arrivals of the host barrier */
	char pad3[CCOM_SHM_LINE - 8];
	struct ccom_shm_ctl ctl[CCOM_SHM_MAX_LOCAL];
	struct ccom_shm_zdesc zdesc[CCOM_SHM_MAX_LOCAL];
	struct ccom_shm_cdesc cdesc[CCOM_SHM_MAX_LOCAL];
	/* CMA verdicts of the per-boot cache (tune/cma_cache.h), read by local rank 0 at init. */
	int8_t cma_verdict[16][16];	/* four lines: out of place, then in place */
	struct ccom_shm_sig sig[CCOM_SHM_MAX_LOCAL][CCOM_SHM_SIG_RING];
	struct ccom_shm_kplace kplace[CCOM_SHM_MAX_LOCAL];
};

struct ccom_shm_fifo {
	_Atomic uint64_t head;		/* bytes written, by the sender only */
	char pad0[CCOM_SHM_LINE - 8];
	_Atomic uint64_t tail;		/* bytes read, by the receiver only */
	char pad1[CCOM_SHM_LINE - 8];
	/* followed by fifo_bytes of data */
};

/* A peer's ccomMemAlloc buffer mapped into this process (zero-copy path). */
struct ccom_shm_zmap {
	int lrank;
	uint64_t serial;
	uint64_t used;			/* zseq of the last operation that used it */
	void *base;
	size_t size;
};
#define CCOM_SHM_ZMAPS 32

struct ccom_shm {
	struct ccomComm *comm;
	int fd;
	void *base;
	size_t size;
	int nlocal;
	int me;				/* local rank */
	struct ccom_shm_hdr *hdr;
	uint64_t *ll;			/* 2 * nlocal * CCOM_SHM_LL_SLOT_WORDS words */
	struct ccom_shm_ll128_line *ll128;	/* 2 * nlocal * CCOM_SHM_LL128_LINES lines */
	char *stage;			/* CCOM_SHM_NBUF * nlocal * chunk bytes */
	char *fifo;			/* nlocal * nlocal * fifo_stride bytes */
	size_t chunk;
	size_t piece;			/* bytes per published piece of the flag-synchronised paths */
	size_t fifo_bytes;
	size_t fifo_stride;
	int numa_node;			/* node this rank's staging and FIFOs prefer, -1: first touch */
	uint64_t barrier_epoch;		/* barriers this rank has passed */
	uint64_t stage_step;		/* direct-engine steps done (buffer = step % NBUF) */
	uint32_t ll_seq;		/* LL operations this rank has done */
	uint64_t ll128_seq;		/* LL128 operations this rank has done */
	uint64_t staged_seq;		/* pieces staged (own ctl->staged mirror) */
	int pidfd[CCOM_SHM_MAX_LOCAL];	/* -1 for self / same process / unsupported */
	/*
	 * What waits on this segment use (proxy/wait.h): its bells, the
	 * liveness of the local peers and the spin policy for this host
	 * (oversubscribed: spin_limit spins and yield_limit yields; else spin
	 * spin_us, unless the peer waited for shares our CPU).
	 */
	struct ccom_wait_source wait_src;
	bool oversubscribed;		/* more local ranks than online CPUs */
	bool bulk;			/* a multi-step collective runs: its barriers never yield */
	/* Zero-copy path: mapped peer buffers (round robin), state, ops run. */
	struct ccom_shm_zmap zmap[CCOM_SHM_ZMAPS];
	int zmap_next;
	int zcopy_state;		/* 0: not tried yet, 1: works, -1: off */
	uint64_t zseq;			/* own zdesc seq mirror */
	uint64_t zcopy_ops;
	int culprit;			/* root cause seen by the last failed wait, -1 */
	int reason;
	/* The collective running now, posted on the mismatch board (seq 0: none). */
	struct ccom_op_sig sig;
	uint32_t sig_ll[CCOM_SHM_LL_HDR_WORDS]; /* @sig as the LL header (ccom_shm_ll_sig_pack()) */
	uint64_t sig_ab[2];		/* @sig as the board's two data words */
	bool sig_checked;		/* the algorithm compared it with every local peer */
};

/* Create (local rank 0) or attach to the segment; collective over the local ranks. */
int ccom_shm_init(struct ccomComm *comm, struct ccom_shm **out);
void ccom_shm_fini(struct ccom_shm *shm);
/*
 * ccomCommGetFailedRanks(): note (ccom_proxy_note_failed) every local peer
 * whose process is gone now and did not depart cleanly, and the culprit a
 * peer that broke published.  Never waits.  NULL is fine.
 */
void ccom_shm_note_dead_peers(struct ccom_shm *shm);

/* Mark this rank departed: it exits cleanly, peers must not report its death. */
void ccom_shm_mark_departed(struct ccom_shm *shm);
/*
 * Mark this rank broken and wake every waiter of the host.  The root cause
 * published is the culprit the last failed wait found (a dead or aborted
 * peer), else this rank with @reason; peers name it in their errors.
 */
void ccom_shm_mark_broken(struct ccom_shm *shm, int reason);

static inline char *ccom_shm_stage(struct ccom_shm *s, int buf, int lrank)
{
	return s->stage + ((size_t)buf * s->nlocal + lrank) * s->chunk;
}

static inline uint64_t *ccom_shm_ll_slot(struct ccom_shm *s, int set, int lrank)
{
	return s->ll + ((size_t)set * s->nlocal + lrank) * CCOM_SHM_LL_SLOT_WORDS;
}

static inline struct ccom_shm_ll128_line *ccom_shm_ll128_slot(struct ccom_shm *s, int set, int lrank)
{
	return s->ll128 + ((size_t)set * s->nlocal + lrank) * CCOM_SHM_LL128_LINES;
}

/*
 * Does @op fit LL128 (coll/ll128.c) on @nlocal ranks: its published bytes
 * in a slot, and every peer's part, in whole lines, in the @scratch bytes
 * of coll/'s scratch buffer?  The tuner asks too.
 */
static inline bool ccom_shm_ll128_fits(const struct ccom_op *op, int nlocal, size_t scratch)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);
	size_t pub = op->kind == CCOM_COLL_REDUCESCATTER || op->kind == CCOM_COLL_ALLTOALL ?
		     b * (size_t)nlocal : b;

	return pub <= CCOM_SHM_LL128_MAX_BYTES && (size_t)nlocal * ((b + 63) & ~(size_t)63) <= scratch;
}

static inline struct ccom_shm_fifo *ccom_shm_fifo(struct ccom_shm *s, int from, int to)
{
	return (struct ccom_shm_fifo *)(s->fifo + ((size_t)from * s->nlocal + to) * s->fifo_stride);
}

/* Wake sleepers of this rank's bell after publishing (pairs with ccom_wait_step()). */
void ccom_shm_ring(struct ccom_shm *s);
/* Ring @bell (any rank's or the host's). */
/* The bell of local rank @lrank. */
static inline struct ccom_bell *ccom_shm_peer_bell(struct ccom_shm *s, int lrank)
{
	return &s->hdr->ctl[lrank].bell;
}

/*
 * Start a wait for data published by local rank @lrank: sleep on its bell
 * (proxy/wait.h has the idiom).
 */
void ccom_shm_wait_begin_peer(struct ccom_wait *w, struct ccom_shm *shm, int lrank);

/*
 * Map local rank @lrank's ccomMemAlloc buffer @serial (its memfd @fd, inode
 * @ino, @size bytes) into this process, cached by (lrank, serial); entries
 * used by the current operation (zseq) are never evicted.  NULL with errno
 * set when the peer's fd cannot be opened, is another file, or cannot be
 * mapped.
 */
void *ccom_shm_map_peer(struct ccom_shm *s, int lrank, uint64_t serial, int fd, uint64_t ino,
			size_t size);

/* Host barrier over the local ranks (all must call it the same number of times). */
int ccom_shm_barrier(struct ccom_shm *s);

/*
 * Collective-mismatch check (CCOM_CHECK_MISMATCH): post @sig for the
 * collective this rank starts now, so that waits check it against the
 * peers' (ccom_wait_ops.check_peers); after the collective,
 * ccom_shm_sig_verify() compares it with every local peer that posted the
 * same seq (@strict: every peer must have: the zero-copy path, before it
 * writes into peers' buffers), and ccom_shm_sig_clear() ends it.  Verify
 * returns 0 or -EPERM after ccom_set_last_error() naming both calls.
 */
void ccom_shm_sig_post(struct ccom_shm *s, const struct ccom_op_sig *sig);
/* 0 if local rank @l's @theirs matches the posted call, else -EPERM naming both. */
int ccom_shm_sig_compare(struct ccom_shm *s, int l, const struct ccom_op_sig *theirs);
/*
 * The same for the board's two words @a, @b of local rank @l (as
 * ccom_shm_sig_post() builds them: LL128's header): 0 if they are this
 * rank's, or both zero (the peer runs with the check off), else -EPERM
 * naming both calls.
 */
int ccom_shm_sig_compare_ab(struct ccom_shm *s, int l, uint64_t a, uint64_t b);
int ccom_shm_sig_verify(struct ccom_shm *s, bool strict);
/*
 * The flag-synchronised paths (coll/direct.c's one-shot): before the first
 * bump of ctl->staged for a collective, _post() puts the posted signature
 * into this rank's control line; once every peer staged the collective's
 * last piece, _match() compares their lines with it (no extra cache miss)
 * and returns true if all are equal, so the caller sets @sig_checked.
 * False (a peer already at its next collective, or a real mismatch)
 * leaves the decision to ccom_shm_sig_verify().
 */
static inline void ccom_shm_staged_sig_post(struct ccom_shm *s)
{
	struct ccom_shm_ctl *c = &s->hdr->ctl[s->me];

	if (!s->sig.seq)
		return;
	atomic_store_explicit(&c->staged_sig[0], s->sig_ab[0], memory_order_relaxed);
	atomic_store_explicit(&c->staged_sig[1], s->sig_ab[1], memory_order_relaxed);
}

static inline bool ccom_shm_staged_sig_match(struct ccom_shm *s)
{
	int p;

	if (!s->sig.seq)
		return false;
	for (p = 0; p < s->nlocal; p++)
		if (p != s->me &&
		    (atomic_load_explicit(&s->hdr->ctl[p].staged_sig[0], memory_order_relaxed) != s->sig_ab[0] ||
		     atomic_load_explicit(&s->hdr->ctl[p].staged_sig[1], memory_order_relaxed) != s->sig_ab[1]))
			return false;
	return true;
}
static inline void ccom_shm_sig_clear(struct ccom_shm *s)
{
	s->sig.seq = 0;
	s->sig_checked = false;
}

/*
 * The signature as the 4 LL header words' data halves (an LL operation
 * moves at most 16 KiB, so 40 bits of count are plenty): seq (low 32
 * bits), count (low 32), kind | dtype << 8 | op << 16 | count bits 32-39
 * << 24, root.  All zero when the check is off.
 */
static inline void ccom_shm_ll_sig_pack(const struct ccom_op_sig *sig, uint32_t w[CCOM_SHM_LL_HDR_WORDS])
{
	w[0] = (uint32_t)sig->seq;
	w[1] = (uint32_t)sig->count;
	w[2] = ((uint32_t)sig->kind & 0xff) | ((uint32_t)sig->dtype & 0xff) << 8 |
	       ((uint32_t)sig->op & 0xff) << 16 | (uint32_t)((sig->count >> 32) & 0xff) << 24;
	w[3] = (uint32_t)sig->root;
}

/* Inverse of ccom_shm_ll_sig_pack(); @mine supplies the seq's high bits. */
static inline void ccom_shm_ll_sig_unpack(const uint32_t w[CCOM_SHM_LL_HDR_WORDS],
					  const struct ccom_op_sig *mine, struct ccom_op_sig *sig)
{
	sig->seq = (mine->seq & ~(uint64_t)UINT32_MAX) | w[0];
	sig->count = (uint64_t)w[1] | (uint64_t)(w[2] >> 24) << 32;
	sig->kind = (int32_t)(w[2] & 0xff);
	sig->dtype = (int32_t)((w[2] >> 8) & 0xff);
	sig->op = (int32_t)(int8_t)((w[2] >> 16) & 0xff);
	sig->root = (int32_t)w[3];
}

#endif
