// SPDX-License-Identifier: MIT
/*
 * grant.c - the per-collective grant exchange of the kdev path (kdev/
 * layer).
 *
 * Before a collective runs on the engine, every rank sends every local
 * peer one packet over the grant channel (channel.c): which
 * registrations (cache ids) hold the buffers peers will read and at which
 * offsets, the collective's signature (kind, count, dtype, op, root: a
 * mismatch is reported instead of computing garbage), whether this rank
 * could register its buffers, and the ids of grants the peer may drop.
 * A dma-buf fd (MEM_EXPORT_DMABUF) rides along as SCM_RIGHTS only when the
 * peer does not hold that registration's grant yet; the peer imports it
 * (MEM_IMPORT_DMABUF, read-only) and keeps the handle keyed by the id.
 * Receiving every peer's packet also proves that every peer entered the
 * collective with its input ready, which is what the schedules need before
 * reading peers' input buffers.  With kd->map (CCOM_KDEV_MAP=1) each
 * imported grant is also mmap()ed read-only, so coll/kdev_mapped.c can
 * read the peer's pages directly; the mapping lives as long as the import.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "proxy/wait.h"
#include "transport/kdev/kdev.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define XMSG_MAGIC 0x6b786368u	/* "kxch" */
#define XMSG_MAX_DROPS 16

struct kdev_xmsg {
	uint32_t magic;
	int32_t rank;
	uint64_t seq;
	struct ccom_kdev_sig sig;
	int32_t ok;
	uint32_t ndrops;
	struct {
		uint64_t id;		/* 0: nothing published in this slot */
		uint64_t off;
		uint32_t has_fd;
		uint32_t pad;
	} pub[CCOM_KDEV_NPUB];
	uint64_t drops[XMSG_MAX_DROPS];
};

struct kdev_import {
	uint64_t id;
	uint32_t handle;
	char *map;		/* kd->map: the grant mapped read-only, or NULL */
	size_t maplen;
};

struct ccom_kdev_imports {
	struct kdev_import *v;
	int n, cap;
};

static void import_unmap(struct kdev_import *x)
{
	if (x->map)
		munmap(x->map, x->maplen);
	x->map = NULL;
}

int ccom_kdev_grant_init(struct ccom_kdev *kd)
{
	int err;

	kd->imports = calloc((size_t)kd->nlocal, sizeof(*kd->imports));
	if (!kd->imports)
		return -ENOMEM;
	err = ccom_kdev_p2p_init(kd);
	return err ? err : ccom_kdev_cache_init(kd);
}

void ccom_kdev_grant_fini(struct ccom_kdev *kd)
{
	int l;

	ccom_kdev_p2p_fini(kd);
	ccom_kdev_cache_fini(kd);
	if (!kd->imports)
		return;
	for (l = 0; l < kd->nlocal; l++) {
		while (kd->imports[l].n)
			import_unmap(&kd->imports[l].v[--kd->imports[l].n]);
		free(kd->imports[l].v);
	}
	free(kd->imports);
	kd->imports = NULL;
}

static struct kdev_import *import_find(struct ccom_kdev_imports *im, uint64_t id)
{
	int i;

	for (i = 0; i < im->n; i++)
		if (im->v[i].id == id)
			return &im->v[i];
	return NULL;
}

static void import_drop(struct ccom_kdev *kd, struct ccom_kdev_imports *im, uint64_t id)
{
	struct kdev_import *x = import_find(im, id);
	struct nccom_destroy d = { .size = sizeof(d) };

	if (!x)
		return;
	d.handle = x->handle;
	ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d);
	import_unmap(x);
	*x = im->v[--im->n];
}

/*
 * Maps a grant read-only.  A failure is not an error: the collectives
 * that would read it run on the engine instead (coll/kdev_mapped.c checks
 * every view), and the reason is logged once.
 */
static void import_map(struct ccom_kdev *kd, int l, struct kdev_import *x, int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	void *p = len > 0 ? mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;

	if (p == MAP_FAILED) {
		if (!kd->warned_map)
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d: cannot mmap peer rank %d's grant (%s); collectives reading it use the engine",
				  kd->comm->rank, kd->comm->local_to_rank[l], strerror(errno));
		kd->warned_map = true;
		return;
	}
	x->map = p;
	x->maplen = (size_t)len;
}

static int import_add(struct ccom_kdev *kd, int l, uint64_t id, int fd, uint32_t *handle)
{
	struct ccom_kdev_imports *im = &kd->imports[l];
	struct nccom_mem_import_dmabuf mi = { .size = sizeof(mi), .flags = NCCOM_MEM_READ, .fd = fd };
	struct kdev_import *v;
	int err;

	if (im->n == im->cap) {
		v = realloc(im->v, (size_t)(im->cap ? im->cap * 2 : 16) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		im->v = v;
		im->cap = im->cap ? im->cap * 2 : 16;
	}
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_MEM_IMPORT_DMABUF, &mi);
	if (err) {
		ccom_set_last_error("kdev: rank %d: MEM_IMPORT_DMABUF of peer rank %d's buffer failed: %s",
				    kd->comm->rank, kd->comm->local_to_rank[l], strerror(-err));
		return err;
	}
	im->v[im->n++] = (struct kdev_import){ id, mi.out_handle, NULL, 0 };
	*handle = mi.out_handle;
	if (kd->map)
		import_map(kd, l, &im->v[im->n - 1], fd);
	return 0;
}

static int export_fd(struct ccom_kdev *kd, struct ccom_kdev_reg *r, int *fd)
{
	struct nccom_mem_export_dmabuf ex = { .size = sizeof(ex), .handle = r->handle };
	int err;

	if (*fd >= 0)
		return 0;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_MEM_EXPORT_DMABUF, &ex);
	if (err) {
		ccom_set_last_error("kdev: rank %d: MEM_EXPORT_DMABUF failed: %s", kd->comm->rank,
				    strerror(-err));
		return err;
	}
	*fd = ex.out_fd;
	return 0;
}

int ccom_kdev_grant_export(struct ccom_kdev *kd, struct ccom_kdev_reg *r, int *fd)
{
	return export_fd(kd, r, fd);
}

int ccom_kdev_grant_import(struct ccom_kdev *kd, int l, uint64_t id, int fd, uint32_t *handle)
{
	struct ccom_kdev_imports *im = &kd->imports[l];
	struct kdev_import *x = import_find(im, id);

	if (fd >= 0) {
		if (x)	/* re-sent after the peer re-registered: replace */
			import_drop(kd, im, id);
		return import_add(kd, l, id, fd, handle);
	}
	if (!x) {
		ccom_set_last_error("kdev: rank %d: peer rank %d referenced grant %llu it never sent",
				    kd->comm->rank, kd->comm->local_to_rank[l],
				    (unsigned long long)id);
		return -EPROTO;
	}
	*handle = x->handle;
	return 0;
}

const char *ccom_kdev_grant_cpu(struct ccom_kdev *kd, int l, uint32_t handle, uint64_t off,
				uint64_t len)
{
	struct ccom_kdev_imports *im = &kd->imports[l];
	struct kdev_import *x;
	int i;

	for (i = 0; i < im->n; i++) {
		x = &im->v[i];
		if (x->handle != handle)
			continue;
		if (!x->map || off > x->maplen || len > x->maplen - off)
			return NULL;
		return x->map + off;
	}
	return NULL;
}

/* Long enough for a peer's abort or death to show in ccom_wait_check(). */
#define REVOKED_LOOK_US 2000000

int ccom_kdev_grant_revoked(struct ccom_kdev *kd, struct ccom_wait *w, int rank, const char *what)
{
	struct timespec nap = { 0, 1000000 };
	char who[32] = "a local peer";
	int64_t until = ccom_now_us() + REVOKED_LOOK_US;
	int err;

	do {
		err = ccom_wait_check(w);
		if (err)
			return err;
		nanosleep(&nap, NULL);
	} while (ccom_now_us() < until);
	if (rank >= 0)
		snprintf(who, sizeof(who), "rank %d", rank);
	ccom_set_last_error("kdev: rank %d: %s unmapped a buffer while this rank read it through its grant during a mapped %s: the owner freed it before the operation completed, and the result is lost",
			    kd->comm->rank, who, what);
	return -EFAULT;
}

void ccom_kdev_grant_drop(struct ccom_kdev *kd, int l, const uint64_t *ids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		import_drop(kd, &kd->imports[l], ids[i]);
}

/* Build and send this rank's packet to local peer @l. */
static int xmsg_send(struct ccom_kdev *kd, int l, const struct ccom_kdev_sig *sig, int vote,
		     struct ccom_kdev_reg *const *pub, const uint64_t *pub_off, int *fds_out)
{
	struct kdev_xmsg m = { .magic = XMSG_MAGIC, .rank = kd->comm->rank, .seq = kd->coll_seq,
			       .sig = *sig, .ok = vote };
	bool ok = vote == CCOM_KDEV_VOTE_OK;
	int fds[CCOM_KDEV_NPUB], nfds = 0, i, err;

	for (i = 0; ok && i < CCOM_KDEV_NPUB; i++) {
		if (!pub[i])
			continue;
		m.pub[i].id = pub[i]->id;
		m.pub[i].off = pub_off[i];
		if (pub[i]->peers_have & (1ull << l))
			continue;
		if (i == 1 && pub[0] == pub[1])
			continue;	/* same registration: one grant is enough */
		err = export_fd(kd, pub[i], &fds_out[i]);
		if (err)
			return err;
		m.pub[i].has_fd = 1;
		fds[nfds++] = fds_out[i];
	}
	m.ndrops = (uint32_t)ccom_kdev_cache_take_drops(kd, l, m.drops, XMSG_MAX_DROPS);
	err = ccom_kdev_sendmsg(kd, l, &m, sizeof(m), fds, nfds);
	if (err)
		return err;
	for (i = 0; ok && i < CCOM_KDEV_NPUB; i++)
		if (pub[i])
			pub[i]->peers_have |= 1ull << l;
	return 0;
}

static const char *sig_kind(uint32_t k)
{
	static const char *const names[] = { "AllReduce", "Broadcast", "Reduce", "AllGather",
					     "ReduceScatter", "AlltoAll" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "another operation";
}

static int xmsg_check(struct ccom_kdev *kd, int l, const struct kdev_xmsg *m,
		      const struct ccom_kdev_sig *sig)
{
	struct ccomComm *comm = kd->comm;
	int peer = comm->local_to_rank[l];

	if (m->magic != XMSG_MAGIC || m->rank != peer || m->seq != kd->coll_seq) {
		ccom_set_last_error("kdev: rank %d: grant packet from peer rank %d is out of sequence (rank %d, seq %llu, want %llu)",
				    comm->rank, peer, m->rank, (unsigned long long)m->seq,
				    (unsigned long long)kd->coll_seq);
		return -EPROTO;
	}
	if (memcmp(&m->sig, sig, sizeof(*sig))) {
		ccom_set_last_error("rank %d: peer rank %d called %s(count %llu, dtype %u, op %u, root %u) while this rank called %s(count %llu, dtype %u, op %u, root %u); every rank must call the same collectives in the same order",
				    comm->rank, peer, sig_kind(m->sig.kind),
				    (unsigned long long)m->sig.count, m->sig.dtype, m->sig.op,
				    m->sig.root, sig_kind(sig->kind), (unsigned long long)sig->count,
				    sig->dtype, sig->op, sig->root);
		return -EINVAL;
	}
	if (m->ndrops > XMSG_MAX_DROPS)
		return -EPROTO;
	return 0;
}

/* Receive local peer @l's packet, import its new grants, fill its views. */
static int xmsg_recv(struct ccom_kdev *kd, int l, const struct ccom_kdev_sig *sig,
		     struct ccom_kdev_view *views, int *all)
{
	struct ccom_kdev_imports *im = &kd->imports[l];
	struct kdev_import *x;
	struct kdev_xmsg m;
	int fds[CCOM_KDEV_NPUB], nfds = 0, used = 0, i, err;

	err = ccom_kdev_recvmsg(kd, l, &m, sizeof(m), fds, CCOM_KDEV_NPUB, &nfds);
	if (err)
		return err;
	err = xmsg_check(kd, l, &m, sig);
	for (i = 0; !err && i < (int)m.ndrops; i++)
		import_drop(kd, im, m.drops[i]);
	if (!err && m.ok != CCOM_KDEV_VOTE_OK && m.ok != CCOM_KDEV_VOTE_SHM)
		m.ok = CCOM_KDEV_VOTE_FAIL;
	if (!err && m.ok != CCOM_KDEV_VOTE_OK && *all != CCOM_KDEV_VOTE_FAIL)
		*all = m.ok;
	for (i = 0; !err && m.ok == CCOM_KDEV_VOTE_OK && i < CCOM_KDEV_NPUB; i++) {
		views[l * CCOM_KDEV_NPUB + i] = (struct ccom_kdev_view){ 0, 0, NULL, 0 };
		if (!m.pub[i].id)
			continue;
		x = import_find(im, m.pub[i].id);
		if (m.pub[i].has_fd) {
			if (used >= nfds) {
				err = -EPROTO;
				break;
			}
			if (x)	/* re-sent after the peer re-registered: replace */
				import_drop(kd, im, m.pub[i].id);
			err = import_add(kd, l, m.pub[i].id, fds[used++],
					 &views[l * CCOM_KDEV_NPUB + i].handle);
		} else if (x) {
			views[l * CCOM_KDEV_NPUB + i].handle = x->handle;
		} else {
			ccom_set_last_error("kdev: rank %d: peer rank %d referenced grant %llu it never sent",
					    kd->comm->rank, kd->comm->local_to_rank[l],
					    (unsigned long long)m.pub[i].id);
			err = -EPROTO;
		}
		views[l * CCOM_KDEV_NPUB + i].off = m.pub[i].off;
		x = err ? NULL : import_find(im, m.pub[i].id);
		if (x && x->map && m.pub[i].off < x->maplen) {
			views[l * CCOM_KDEV_NPUB + i].cpu = x->map + m.pub[i].off;
			views[l * CCOM_KDEV_NPUB + i].cpu_len = x->maplen - m.pub[i].off;
		}
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return err;
}

int ccom_kdev_exchange(struct ccom_kdev *kd, const struct ccom_kdev_sig *sig, int vote,
		       struct ccom_kdev_reg *const *pub, const uint64_t *pub_off,
		       struct ccom_kdev_view *views, int *all)
{
	int fds[CCOM_KDEV_NPUB], l, i, err = 0;
	bool ok = vote == CCOM_KDEV_VOTE_OK;

	for (i = 0; i < CCOM_KDEV_NPUB; i++) {
		fds[i] = -1;
		views[kd->me * CCOM_KDEV_NPUB + i] = (struct ccom_kdev_view){
			ok && pub[i] ? pub[i]->handle : 0, pub_off[i],
			ok && pub[i] ? (const char *)pub[i]->start + pub_off[i] : NULL,
			ok && pub[i] ? pub[i]->end - pub[i]->start - pub_off[i] : 0 };
	}
	*all = vote;
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = xmsg_send(kd, l, sig, vote, pub, pub_off, fds);
	for (i = 0; i < CCOM_KDEV_NPUB; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Everyone sends before receiving: packets are small, sockets never fill. */
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = xmsg_recv(kd, l, sig, views, all);
	kd->coll_seq++;
	return err;
}
