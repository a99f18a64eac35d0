// SPDX-License-Identifier: MIT
/*
 * pair_sem.c - the per-pair state of Send/Recv on the engine (kdev room):
 * one semaphore per (receiver, sender) pair, created by the receiver at
 * the first transfer and granted with its first packet; its value counts
 * the pair's completed transfers, which both sides know.  The schedule
 * that uses them is coll/kdev_p2p.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "transport/kdev/kdev.h"
#include "util/err.h"

int ccom_kdev_p2p_init(struct ccom_kdev *kd)
{
	struct ccom_kdev_p2p *p = calloc(1, sizeof(*p));
	size_t n = (size_t)kd->nlocal;

	if (!p)
		return -ENOMEM;
	kd->p2p = p;
	p->sem = calloc(n, sizeof(*p->sem));
	p->sem_sent = calloc(n, sizeof(*p->sem_sent));
	p->peer_sem = calloc(n, sizeof(*p->peer_sem));
	p->rx = calloc(n, sizeof(*p->rx));
	p->tx = calloc(n, sizeof(*p->tx));
	p->seq_out = calloc(n, sizeof(*p->seq_out));
	p->seq_in = calloc(n, sizeof(*p->seq_in));
	if (!p->sem || !p->sem_sent || !p->peer_sem || !p->rx || !p->tx || !p->seq_out ||
	    !p->seq_in)
		return -ENOMEM;
	return 0;
}

/* Memory only: the semaphores die with the file descriptor. */
void ccom_kdev_p2p_fini(struct ccom_kdev *kd)
{
	struct ccom_kdev_p2p *p = kd->p2p;

	if (!p)
		return;
	free(p->sem);
	free(p->sem_sent);
	free(p->peer_sem);
	free(p->rx);
	free(p->tx);
	free(p->seq_out);
	free(p->seq_in);
	free(p);
	kd->p2p = NULL;
}

void ccom_kdev_p2p_cancel(struct ccom_kdev *kd)
{
	struct ccom_kdev_p2p *p = kd->p2p;
	int l;

	for (l = 0; p && l < kd->nlocal; l++) {
		struct nccom_destroy d = { .size = sizeof(d), .handle = p->sem[l] };

		if (p->sem[l])
			ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d);
		p->sem[l] = 0;
	}
}

int ccom_kdev_p2p_sem_get(struct ccom_kdev *kd, int l)
{
	struct ccom_kdev_p2p *p = kd->p2p;
	struct nccom_sem_create sc = { .size = sizeof(sc) };
	int err;

	if (p->sem[l])
		return 0;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_CREATE, &sc);
	if (err) {
		ccom_set_last_error("kdev: rank %d: SEM_CREATE for receptions from peer rank %d failed: %s",
				    kd->comm->rank, kd->comm->local_to_rank[l], strerror(-err));
		return err;
	}
	p->sem[l] = sc.out_handle;
	return 0;
}

int ccom_kdev_p2p_sem_export(struct ccom_kdev *kd, int l, int *fd)
{
	struct nccom_sem_export ex = { .size = sizeof(ex), .handle = kd->p2p->sem[l] };
	int err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_EXPORT, &ex);

	if (err) {
		ccom_set_last_error("kdev: rank %d: SEM_EXPORT failed: %s", kd->comm->rank,
				    strerror(-err));
		return err;
	}
	*fd = ex.out_fd;
	return 0;
}
