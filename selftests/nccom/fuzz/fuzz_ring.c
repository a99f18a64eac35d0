// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the ring half of the nccom fuzzer's workers: mmap of queue
 * rings with wrong lengths, offsets, flags and the peer's offsets,
 * munmap/mremap, descriptors built with one mutation each (range at and
 * across the end, wrapping sums, bad dtype/op, header bits) together with
 * the completion the model expects, submission in batches that race the
 * engine, rare corruption of the ring header, and the reaping of
 * completions against the model.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/nccom.h>

#include "fuzz.h"

void fz_op_mmap(void)
{
	int qi = fz_rnd(&fz_w.r, MAXQ), fi, rc;
	struct fq *q = &fz_w.q[qi];
	void *p;
	size_t len;
	uint64_t off;
	int flags = MAP_SHARED, kind = fz_rnd(&fz_w.r, 8), expect_fail = 1;

	if (!q->used)
		return;
	fi = q->fdi;
	len = q->mapsz;
	off = q->off;
	switch (kind) {
	case 0:
		len -= PG;
		break;
	case 1:
		len += PG;
		break;
	case 2:
		flags = MAP_PRIVATE;
		break;
	case 3:
		off += PG * (1 + fz_rnd(&fz_w.r, 4));
		break;
	case 4:	/* the peer's offset: another fd's queue, maybe another uid's */
		if (!fz_w.have_peer)
			return;
		off = fz_w.peer.mmap_off[fz_rnd(&fz_w.r, 2)];
		{
			struct fobj *o = fz_obj_find(fi, (uint32_t)(off >> 32));

			if (o && o->type == O_QUEUE && !(off & 0xffffffffu))
				return;	/* names our own queue by coincidence */
		}
		fz_add(&fz_sh->isolation, 1);
		break;
	default:
		if (q->map)
			return;
		expect_fail = 0;
		break;
	}
	if (!len)
		return;
	fz_sh->w[fz_slot].cur_op = FZ_X_MMAP;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fz_w.f[fi].fd, off);
	rc = p == MAP_FAILED ? -1 : 0;
	fz_cov_x(FZ_X_MMAP, rc, errno);
	if (expect_fail && !rc) {
		fz_finding("mmap of queue %u (kind %d, off %#llx len %zu) succeeded", q->h, kind,
			   (unsigned long long)off, len);
		munmap(p, len);
	} else if (!expect_fail && rc && !fz_resource_err(errno)) {
		fz_finding("mmap of queue %u failed: %s", q->h, strerror(errno));
	} else if (!expect_fail) {
		struct nccom_ring_hdr *h = p;

		/* A queue whose header this worker corrupted keeps the garbage. */
		if (!q->chaos && (h->magic != NCCOM_RING_MAGIC || h->depth != q->depth ||
				  h->sq_offset != q->sq_off || h->cq_offset != q->cq_off))
			fz_finding("ring header of queue %u: magic %#x depth %u", q->h, h->magic,
				   h->depth);
		q->map = p;
	} else if (rc && errno != EINVAL && errno != ENOENT && !fz_resource_err(errno)) {
		fz_finding("bad mmap of queue %u (kind %d): %s", q->h, kind, strerror(errno));
	}
}

void fz_op_unmap(void)
{
	int qi = fz_rnd(&fz_w.r, MAXQ);
	struct fq *q = &fz_w.q[qi];
	void *p;

	if (!q->used || !q->map)
		return;
	if (fz_chance(&fz_w.r, 30)) {
		/* mremap: the driver's mapping must refuse to grow, may move */
		fz_sh->w[fz_slot].cur_op = FZ_X_MREMAP;
		p = mremap(q->map, q->mapsz, q->mapsz + (fz_chance(&fz_w.r, 50) ? PG : 0),
			   MREMAP_MAYMOVE);
		fz_cov_x(FZ_X_MREMAP, p == MAP_FAILED ? -1 : 0, errno);
		if (p != MAP_FAILED) {
			q->map = p;
			return;
		}
	}
	munmap(q->map, q->mapsz);
	q->map = NULL;
}

/* Builds a descriptor with one mutation and what the model expects of it. */
static void desc_build(int fi, struct nccom_desc *d, struct fexp *e)
{
	struct fobj *dst = fz_obj_pick(fi, O_MEM), *src = fz_obj_pick(fi, O_MEM), *src2 = NULL;
	static const uint8_t dsz[NCCOM_DTYPE_COUNT] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };
	/* mut >= 12: no mutation (about half of the descriptors are valid). */
	unsigned int op = fz_rnd(&fz_w.r, 10), mut = fz_rnd(&fz_w.r, 24);
	uint64_t len, maxlen;
	struct fobj *s;

	memset(d, 0, sizeof(*d));
	memset(e, 0, sizeof(*e));
	e->epoch = fz_w.f[fi].epoch;
	e->created = fz_w.f[fi].created;
	if (op < 2) {
		d->opcode = NCCOM_OP_NOP;
	} else if (op < 6) {
		d->opcode = NCCOM_OP_COPY;
	} else if (op < 8) {
		d->opcode = NCCOM_OP_REDUCE;
		d->dtype = fz_rnd(&fz_w.r, NCCOM_DTYPE_COUNT);
		d->op = fz_rnd(&fz_w.r, NCCOM_REDOP_COUNT);
		if (fz_chance(&fz_w.r, 50))
			src2 = fz_obj_pick(fi, O_MEM);
	} else {
		d->opcode = op == 8 ? NCCOM_OP_SEM_SIGNAL : NCCOM_OP_SEM_WAIT;
		s = fz_obj_pick(fi, O_SEM);
		d->sem_handle = s ? s->h : fz_bad_handle(fi, O_SEM);
		if (s && s->owner)
			d->value = s->semval + (op == 8 ? fz_rnd(&fz_w.r, 3) : 0);
		else
			d->value = fz_rnd(&fz_w.r, 4);
		e->op = d->opcode;
		if (!s) {
			e->want = ENOENT;
		} else {
			e->any = true;
			if (s->owner && op == 8)
				s->semval = d->value;	/* completes in order, or not at all */
		}
		if (mut == 0) {
			d->src_handle = 1;
			e->want = EINVAL, e->any = false;
		}
		goto common;
	}
	e->op = d->opcode;
	if (d->opcode == NCCOM_OP_NOP) {
		if (mut < 2) {
			d->length = 1 + fz_rnd(&fz_w.r, 100);
			e->want = EINVAL;
		}
		goto common;
	}
	/* COPY / REDUCE: pick a length that fits every range, then maybe break one. */
	maxlen = UINT64_MAX;
	if (dst)
		maxlen = dst->len;
	if (src && src->len < maxlen)
		maxlen = src->len;
	if (src2 && src2->len < maxlen)
		maxlen = src2->len;
	if (maxlen == UINT64_MAX)
		maxlen = PG;
	len = fz_rnd(&fz_w.r, maxlen + 1);
	if (fz_chance(&fz_w.r, 50))
		len = fz_rnd(&fz_w.r, 65);
	d->dst_handle = dst ? dst->h : fz_bad_handle(fi, O_MEM);
	d->src_handle = src ? src->h : fz_bad_handle(fi, O_MEM);
	if (src2)
		d->src2_handle = src2->h;
	if (d->opcode == NCCOM_OP_REDUCE) {
		d->count = len / dsz[d->dtype];
		len = d->count * dsz[d->dtype];
	} else {
		d->length = len;
	}
	d->dst_offset = dst ? fz_rnd(&fz_w.r, dst->len - len + 1) : 0;
	d->src_offset = src ? fz_rnd(&fz_w.r, src->len - len + 1) : 0;
	if (src2)
		d->src2_offset = fz_rnd(&fz_w.r, src2->len - len + 1);
	/* Range mutations: at and across the end, wrapping sums. */
	switch (mut) {
	case 1:
		if (dst) {
			d->dst_offset = dst->len - len + 1 + fz_rnd(&fz_w.r, 64);
			if (len + d->dst_offset > dst->len)
				e->want = EOVERFLOW;
		}
		break;
	case 2:
		if (src) {
			d->src_offset = fz_chance(&fz_w.r, 50) ? UINT64_MAX - fz_rnd(&fz_w.r, 64) :
							      src->len + fz_rnd(&fz_w.r, 64);
			e->want = len || d->src_offset > src->len ? EOVERFLOW : 0;
		}
		break;
	case 3:
		if (d->opcode == NCCOM_OP_COPY) {
			d->length = fz_chance(&fz_w.r, 50) ? UINT64_MAX - fz_rnd(&fz_w.r, 64) :
							  maxlen + 1 + fz_rnd(&fz_w.r, PG);
			len = d->length;
		} else {
			d->count = fz_chance(&fz_w.r, 50) ? UINT64_MAX / 2 + fz_rnd(&fz_w.r, 64) :
							 maxlen / dsz[d->dtype] + 1;
			len = d->count * dsz[d->dtype];
			if (d->count > UINT64_MAX / dsz[d->dtype]) {
				e->want = EOVERFLOW;
				goto common;
			}
		}
		e->want = EOVERFLOW;
		break;
	case 4:
		if (d->opcode == NCCOM_OP_REDUCE) {
			if (fz_chance(&fz_w.r, 50))
				d->dtype = NCCOM_DTYPE_COUNT + fz_rnd(&fz_w.r, 200);
			else
				d->op = NCCOM_REDOP_COUNT + fz_rnd(&fz_w.r, 200);
		} else {
			d->dtype = 1 + fz_rnd(&fz_w.r, 9);
		}
		e->want = EINVAL;
		goto common;
	case 5:
		if (d->opcode == NCCOM_OP_COPY || !d->src2_handle) {
			d->src2_offset = 1 + fz_rnd(&fz_w.r, 100);
			e->want = EINVAL;
			goto common;
		}
		break;
	default:
		break;
	}
	goto order;
order:
	/*
	 * A range mutation is reported only after the lookups before it
	 * succeeded: recompute in the engine's order.
	 */
	{
		int r = 0;
		uint64_t end;

		if (!dst)
			r = ENOENT;
		else if (!(dst->access & NCCOM_MEM_WRITE))
			r = EACCES;
		else if (__builtin_add_overflow(d->dst_offset, len, &end) || end > dst->len)
			r = EOVERFLOW;
		else if (!src)
			r = ENOENT;
		else if (!(src->access & NCCOM_MEM_READ))
			r = EACCES;
		else if (__builtin_add_overflow(d->src_offset, len, &end) || end > src->len)
			r = EOVERFLOW;
		else if (src2 && !(src2->access & NCCOM_MEM_READ))
			r = EACCES;
		else if (src2 && (__builtin_add_overflow(d->src2_offset, len, &end) ||
				  end > src2->len))
			r = EOVERFLOW;
		e->want = r;
		if (!r && ((dst && (dst->buf == -2 || dst->remote)) ||
			   (src && (src->buf == -2 || src->remote)) ||
			   (src2 && (src2->buf == -2 || src2->remote))))
			e->any = true;
	}
common:
	if (mut == 11) {
		/* Header mutations of the descriptor itself win over everything. */
		switch (fz_rnd(&fz_w.r, 4)) {
		case 0:
			d->flags = 1u << fz_rnd(&fz_w.r, 32);
			break;
		case 1:
			d->__reserved0 = 1 + fz_rnd(&fz_w.r, 255);
			break;
		case 2:
			d->__reserved1 = 1 + fz_rnd(&fz_w.r, UINT32_MAX - 1);
			break;
		default:
			d->opcode = NCCOM_OP_SEM_WAIT + 1 + fz_rnd(&fz_w.r, 250);
			break;
		}
		e->want = EINVAL;
		e->any = false;
	}
	d->cookie = 0;	/* set by the caller */
}

void fz_reap(struct fq *q, int fi)
{
	struct nccom_ring_hdr *h = (struct nccom_ring_hdr *)q->map;
	struct nccom_cqe *cq = (struct nccom_cqe *)(q->map + q->cq_off);
	uint32_t tail = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
	struct nccom_cqe c;
	struct fexp *e;
	int st, slot;

	if (tail - q->head > q->depth) {
		if (!q->chaos)
			fz_finding("queue %u: cq_tail %u is %u ahead of cq_head (depth %u)", q->h,
				   tail, tail - q->head, q->depth);
		q->chaos = true;
		q->head = tail;
		__atomic_store_n(&h->cq_head, tail, __ATOMIC_RELEASE);
		return;
	}
	while (q->head != tail) {
		c = cq[q->head & (q->depth - 1)];
		q->head++;
		st = -c.status;
		slot = st >= 0 && st < FZ_NERR ? st : FZ_NERR - 1;
		if (q->chaos)
			continue;
		fz_add(&fz_sh->cqes, 1);
		if (c.cookie >= q->nexp || q->nexp - c.cookie > 2 * q->depth) {
			fz_finding("queue %u: completion with cookie %llu, issued %u", q->h,
				   (unsigned long long)c.cookie, q->nexp);
			continue;
		}
		e = &q->exp[c.cookie & (2 * q->depth - 1)];
		fz_count(&fz_sh->desc_cov[e->op < FZ_NDESC ? e->op : FZ_NDESC - 1][slot]);
		if (c.__reserved)
			fz_finding("queue %u: cqe reserved %u", q->h, c.__reserved);
		if (st == ECANCELED || e->epoch != fz_w.f[fi].epoch)
			continue;	/* the model changed since it was queued */
		if (e->created != fz_w.f[fi].created && (e->want == ENOENT || e->any))
			continue;	/* an absent handle may exist now */
		if (e->any) {
			if (st != 0 && st != EFAULT && st != EINVAL && st != EPIPE && st != ENOMEM)
				fz_finding("queue %u: descriptor %llu (op %u) completed %d", q->h,
					   (unsigned long long)c.cookie, e->op, c.status);
			continue;
		}
		if (st != e->want && !(st == ENOMEM && !e->want))
			fz_finding("queue %u: descriptor %llu (op %u) completed %d (%s), the model expects %d (%s)",
				   q->h, (unsigned long long)c.cookie, e->op, c.status,
				   strerror(st), -e->want, strerror(e->want));
	}
	__atomic_store_n(&h->cq_head, q->head, __ATOMIC_RELEASE);
}

static struct fq *q_pick_mapped(void)
{
	int qi = fz_rnd(&fz_w.r, MAXQ);

	if (!fz_w.q[qi].used || !fz_w.q[qi].map || fz_w.f[fz_w.q[qi].fdi].fd < 0)
		return NULL;
	return &fz_w.q[qi];
}

void fz_op_submit(void)
{
	struct fq *q = q_pick_mapped();
	struct nccom_ring_hdr *h;
	struct nccom_desc *sq, d;
	struct nccom_queue_doorbell db = { .size = sizeof(db) };
	unsigned int n, i;
	struct fexp e;

	if (!q)
		return;
	h = (struct nccom_ring_hdr *)q->map;
	sq = (struct nccom_desc *)(q->map + q->sq_off);
	if (q->chaos) {
		/* No model any more: follow whatever the header says. */
		q->tail = __atomic_load_n(&h->sq_tail, __ATOMIC_ACQUIRE);
		q->head = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
		__atomic_store_n(&h->cq_head, q->head, __ATOMIC_RELEASE);
	}
	fz_reap(q, q->fdi);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == NCCOM_QUEUE_ERROR &&
	    fz_chance(&fz_w.r, 80)) {
		struct nccom_queue_reset rs = { .size = sizeof(rs), .handle = q->h };

		rs.flags = fz_chance(&fz_w.r, 30) ? NCCOM_QUEUE_RESET_DISCARD : 0;
		fz_xioctl(fz_w.f[q->fdi].fd, 8, &rs, M_NONE, 0, "reset before submit");
	}
	n = 1 + fz_rnd(&fz_w.r, q->depth);
	for (i = 0; i < n; i++) {
		/* At most depth in the SQ and 2 * depth not yet reaped. */
		if (q->tail - __atomic_load_n(&h->sq_head, __ATOMIC_ACQUIRE) >= q->depth ||
		    q->tail - q->head >= 2 * q->depth)
			break;
		desc_build(q->fdi, &d, &e);
		d.cookie = q->nexp;
		q->exp[q->nexp & (2 * q->depth - 1)] = e;
		q->nexp++;
		sq[q->tail & (q->depth - 1)] = d;
		q->tail++;
		fz_add(&fz_sh->descs, 1);
		/* Sometimes publish in the middle of a batch: racing the engine. */
		if (fz_chance(&fz_w.r, 20))
			__atomic_store_n(&h->sq_tail, q->tail, __ATOMIC_RELEASE);
	}
	if (fz_chance(&fz_w.r, 1)) {
		/* Corrupt the header: the engine must survive any value. */
		switch (fz_rnd(&fz_w.r, 4)) {
		case 0:
			__atomic_store_n(&h->sq_tail, (uint32_t)fz_next(&fz_w.r), __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(&h->cq_head, (uint32_t)fz_next(&fz_w.r), __ATOMIC_RELEASE);
			break;
		case 2:
			h->depth = (uint32_t)fz_next(&fz_w.r);
			h->mask = (uint32_t)fz_next(&fz_w.r);
			h->sq_offset = (uint32_t)fz_next(&fz_w.r);
			break;
		default:
			__atomic_store_n(&h->sq_tail, q->tail + q->depth + fz_rnd(&fz_w.r, 5),
					 __ATOMIC_RELEASE);
			break;
		}
		q->chaos = true;
	} else {
		__atomic_store_n(&h->sq_tail, q->tail, __ATOMIC_RELEASE);
	}
	if (fz_chance(&fz_w.r, 85)) {
		db.handle = q->h;
		fz_xioctl(fz_w.f[q->fdi].fd, 6, &db, M_NONE, 0, "after submit");
	}
}
