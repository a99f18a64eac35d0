// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a 30-second stress run (NCCOM_STRESS_SECONDS overrides) of 4
 * processes with 3 queues each. Every process exports its source buffer to
 * the next one over SCM_RIGHTS; in each round every queue gets a batch of
 * COPY (own and neighbour's memory, random offsets and lengths) and int32
 * REDUCE descriptors into disjoint slots of its own destination buffer, and
 * queue 1 waits (SEM_WAIT) on a semaphore that queue 0 signals at the end
 * of its batch. Every result is checked against a userspace computation.
 */
#include <stdlib.h>

#include "nccom_utils.h"

#define NPROC 4
#define NQ 3
#define SRC_LEN (256 * 1024)
#define DST_LEN (256 * 1024)
#define NSLOT 8
#define SLOT (DST_LEN / NSLOT)

struct job {
	int reduce;
	uint32_t soff, len;	/* bytes */
	int neighbour;
};

struct proc {
	int fd;
	uint8_t *src, *nsrc_copy, *dst[NQ];
	uint32_t hsrc, hnb, hdst[NQ], sem;
	struct nccom_ring q[NQ];
	uint32_t rnd;
};

static uint32_t rnd(struct proc *p)
{
	p->rnd = p->rnd * 1103515245u + 12345u;
	return p->rnd >> 8;
}

static int setup(struct proc *p, int id, int send_sock, int recv_sock)
{
	uint32_t tag;
	int i, dbfd, nbfd;

	p->fd = nccom_open();
	p->src = nccom_alloc(SRC_LEN);
	p->nsrc_copy = malloc(SRC_LEN);
	if (p->fd < 0 || !p->src || !p->nsrc_copy)
		return 10;
	fill_pattern(p->src, SRC_LEN, 100 + id);
	fill_pattern(p->nsrc_copy, SRC_LEN, 100 + (id + NPROC - 1) % NPROC);
	if (_test_cmd_mem_register(p->fd, NCCOM_MEM_READ, p->src, SRC_LEN, &p->hsrc) ||
	    _test_cmd_mem_export(p->fd, p->hsrc, &dbfd) || send_fd(send_sock, dbfd, id))
		return 11;
	close(dbfd);
	nbfd = recv_fd(recv_sock, &tag);
	if (nbfd < 0 || _test_cmd_mem_import(p->fd, NCCOM_MEM_READ, nbfd, 0, 0, &p->hnb,
					     NULL))
		return 12;
	close(nbfd);
	for (i = 0; i < NQ; i++) {
		p->dst[i] = nccom_alloc(DST_LEN);
		if (!p->dst[i] ||
		    _test_cmd_mem_register(p->fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE,
					   p->dst[i], DST_LEN, &p->hdst[i]) ||
		    nccom_ring_create(p->fd, 0, 16, &p->q[i]))
			return 13;
	}
	if (_test_cmd_sem_create(p->fd, 0, &p->sem))
		return 14;
	p->rnd = id * 7 + 1;
	return 0;
}

static void plan(struct proc *p, struct job *j)
{
	j->reduce = rnd(p) % 3 == 0;
	j->neighbour = rnd(p) & 1;
	j->len = 1 + rnd(p) % SLOT;
	if (j->reduce)
		j->len = 4 * (1 + rnd(p) % (SLOT / 4));
	j->soff = rnd(p) % (SRC_LEN - j->len + 1);
	if (j->reduce)
		j->soff &= ~3u;
}

static struct nccom_desc build(struct proc *p, int q, int slot, const struct job *j,
			       uint64_t cookie)
{
	uint32_t s = j->neighbour ? p->hnb : p->hsrc;

	if (j->reduce)
		return desc_reduce(NCCOM_DTYPE_INT32, NCCOM_REDOP_SUM, p->hdst[q],
				   slot * SLOT, p->hsrc, j->soff, p->hnb, j->soff,
				   j->len / 4, cookie);
	return desc_copy(p->hdst[q], slot * SLOT, s, j->soff, j->len, cookie);
}

static int check(struct proc *p, int q, int slot, const struct job *j)
{
	const uint8_t *got = p->dst[q] + slot * SLOT;
	const uint8_t *s = j->neighbour ? p->nsrc_copy : p->src;
	uint32_t i;

	if (!j->reduce)
		return memcmp(got, s + j->soff, j->len) ? 1 : 0;
	for (i = 0; i < j->len / 4; i++) {
		uint32_t a, b, r;

		memcpy(&a, p->src + j->soff + 4 * i, 4);
		memcpy(&b, p->nsrc_copy + j->soff + 4 * i, 4);
		memcpy(&r, got + 4 * i, 4);
		if (r != a + b)
			return 1;
	}
	return 0;
}

static uint64_t sem_value(struct proc *p)
{
	uint64_t v = 0;

	_test_cmd_sem_read(p->fd, p->sem, &v, NULL);
	return v;
}

/* One round: a batch on every queue, then reap and verify all of them. */
static int round_trip(struct proc *p, uint64_t round, uint64_t *ops)
{
	struct job jobs[NQ][NSLOT];
	struct nccom_desc d[NSLOT + 1];
	struct nccom_cqe c[NSLOT + 1];
	int q, k, n, rc, nq[NQ];

	for (q = 0; q < NQ; q++) {
		n = 0;
		if (q == 1)
			d[n++] = desc_sem(NCCOM_OP_SEM_WAIT, p->sem, round, 1000);
		for (k = 0; k < NSLOT - 1; k++) {
			plan(p, &jobs[q][k]);
			d[n++] = build(p, q, k, &jobs[q][k], k);
		}
		if (q == 0)
			d[n++] = desc_sem(NCCOM_OP_SEM_SIGNAL, p->sem, round, 1001);
		rc = nccom_ring_submit(&p->q[q], d, n);
		if (rc)
			return 20;
		nq[q] = n;
	}
	for (q = 0; q < NQ; q++) {
		rc = nccom_ring_reap(&p->q[q], c, nq[q], nq[q], 60000);
		if (rc != nq[q]) {
			printf("# stress: round %llu queue %d: reaped %d of %d; state %u error %d sq_head %u sq_tail %u cq_tail %u sem %llu\n",
			       (unsigned long long)round, q, rc, nq[q], p->q[q].kh->state,
			       p->q[q].kh->error, p->q[q].kh->sq_head, p->q[q].sq_tail,
			       p->q[q].kh->cq_tail, (unsigned long long)sem_value(p));
			fflush(stdout);
			return 21;
		}
		for (k = 0; k < nq[q]; k++) {
			if (c[k].status) {
				printf("# stress: round %llu queue %d: cookie %llu status %d\n",
				       (unsigned long long)round, q,
				       (unsigned long long)c[k].cookie, c[k].status);
				fflush(stdout);
				return 22;
			}
		}
		for (k = 0; k < NSLOT - 1; k++)
			if (check(p, q, k, &jobs[q][k]))
				return 23;
		*ops += nq[q];
	}
	return 0;
}

/*
 * Children leave together: a grant's memory goes away with its exporter
 * (importers then get -EFAULT), so nobody exits while a neighbour may still
 * be copying from it.
 */
static int barrier(int done_w, int go_r)
{
	char c = 0;

	if (write_full(done_w, &c, 1) || read_full(go_r, &c, 1))
		return 30;
	return 0;
}

static int child(int id, int send_sock, int recv_sock, unsigned int seconds,
		 int done_w, int go_r)
{
	struct proc p;
	uint64_t end, round = 0, ops = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = setup(&p, id, send_sock, recv_sock);
	if (rc)
		return rc;
	end = deadline_ms(seconds * 1000ULL);
	while (now_ns() < end) {
		rc = round_trip(&p, ++round, &ops);
		if (rc)
			return rc;
	}
	printf("# stress: process %d: %llu rounds, %llu descriptors verified\n", id,
	       (unsigned long long)round, (unsigned long long)ops);
	fflush(stdout);
	rc = barrier(done_w, go_r);
	close(p.fd);
	return rc;
}

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/* 30 s of work plus setup and verification under TCG. */
TEST_F_TIMEOUT(stress, four_processes_three_queues, 240)
{
	const char *env = getenv("NCCOM_STRESS_SECONDS");
	unsigned int seconds = env ? (unsigned int)atoi(env) : 30;
	int link[NPROC][2], done[2], go[2], status, i;
	char c = 0;
	struct nccom_info base, info;
	pid_t pid[NPROC];
	int fd = nccom_open();

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(fd, &base));
	close(fd);
	for (i = 0; i < NPROC; i++)
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link[i]));
	ASSERT_EQ(0, pipe(done));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		/* Link i carries process i's grant to process i + 1. */
		if (pid[i] == 0) {
			close(done[0]);
			close(go[1]);
			_exit(child(i, link[i][0], link[(i + NPROC - 1) % NPROC][1], seconds,
				    done[1], go[0]));
		}
	}
	close(done[1]);
	close(go[0]);
	/* Everyone finished (or died: then read() sees EOF early). */
	for (i = 0; i < NPROC; i++)
		if (read(done[0], &c, 1) != 1)
			break;
	for (i = 0; i < NPROC; i++)
		if (write(go[1], &c, 1) != 1)
			break;
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(0, wait_child(pid[i], &status, (seconds + 120) * 1000ULL));
		EXPECT_TRUE(child_ok(status)) TH_LOG("process %d failed: status 0x%x (exit %d)",
						     i, status,
						     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	EXPECT_EQ(0, nccom_wait_counters(base.out_objects, base.out_pinned_pages, &info));
}

TEST_HARNESS_MAIN
