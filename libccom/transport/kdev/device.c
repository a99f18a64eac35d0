// SPDX-License-Identifier: MIT
/*
 * device.c - the device of the kdev room: /dev/nccom opened per
 * communicator and rank, the GET_INFO compatibility check, the queue and
 * its mmap'd ring, the rank's timeline semaphore and its exchange with the
 * local peers over the grant channel (channel.c), and the cancel after a
 * failure.  Handles are local to a file descriptor, so nothing guessable
 * ever crosses processes.
 *
 * The decision to use kdev is collective: every rank probes the driver,
 * the results are all-gathered, and kdev is used only if every rank can
 * (otherwise one INFO line says which rank could not and why, and coll/
 * keeps its shm path; with CCOM_KDEV=1 that is an error naming the cause).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define KDEV_NEED_FEATURES (NCCOM_FEAT_MEM_REGISTER | NCCOM_FEAT_DMABUF_EXPORT | \
			    NCCOM_FEAT_DMABUF_IMPORT | NCCOM_FEAT_SEM_FD | NCCOM_FEAT_QUEUE_WAIT)

/* What each rank tells the others about its probe (all-gathered). */
struct kdev_probe {
	int32_t ok;
	int32_t err;
	int32_t mode;		/* CCOM_KDEV: -1 unset, 0, 1 */
	int32_t engine_slow;	/* calibrate.c's verdict (automatic mode only) */
	int64_t min_bytes;	/* CCOM_KDEV_MIN_BYTES */
	uint64_t features;
	char reason[176];
};

int ccom_kdev_ioctl(struct ccom_kdev *kd, unsigned long cmd, void *arg)
{
	int rc;

	do {
		rc = ioctl(kd->fd, cmd, arg);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

static int kdev_destroy_handle(struct ccom_kdev *kd, uint32_t handle)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = handle };

	return handle ? ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d) : 0;
}

/* ---- device, queue, semaphore ---- */

static int kdev_open(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	int err;

	kd->fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	if (kd->fd < 0) {
		err = -errno;
		snprintf(pr->reason, sizeof(pr->reason), "%s /dev/nccom: %s",
			 err == -ENOENT ? "no nccom driver loaded:" : "cannot open", strerror(-err));
		return err;
	}
	memset(&kd->info, 0, sizeof(kd->info));
	kd->info.size = sizeof(kd->info);
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_GET_INFO, &kd->info);
	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "NCCOM_IOC_GET_INFO failed: %s",
			 strerror(-err));
		return err;
	}
	pr->features = kd->info.out_features;
	if (kd->info.out_compat_id != NCCOM_COMPAT_ID) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver compat id %#llx does not match the library's %#llx (ABI %u vs %u); rebuild or reload nccom.ko",
			 (unsigned long long)kd->info.out_compat_id,
			 (unsigned long long)NCCOM_COMPAT_ID, kd->info.out_abi_version,
			 NCCOM_ABI_VERSION);
		return -EPROTO;
	}
	if ((kd->info.out_features & KDEV_NEED_FEATURES) != KDEV_NEED_FEATURES) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver lacks features %#llx (has %#llx)",
			 (unsigned long long)(KDEV_NEED_FEATURES & ~kd->info.out_features),
			 (unsigned long long)kd->info.out_features);
		return -EOPNOTSUPP;
	}
	if (kd->info.out_desc_size != sizeof(struct nccom_desc) ||
	    kd->info.out_cqe_size != sizeof(struct nccom_cqe)) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver descriptor/completion sizes %u/%u differ from the library's %zu/%zu",
			 kd->info.out_desc_size, kd->info.out_cqe_size,
			 sizeof(struct nccom_desc), sizeof(struct nccom_cqe));
		return -EPROTO;
	}
	return 0;
}

static int kdev_ring_create(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_create qc = { .size = sizeof(qc) };
	uint32_t depth = CCOM_KDEV_DEPTH;
	int err;

	while (depth > kd->info.out_max_queue_depth && depth > 16)
		depth >>= 1;
	qc.dev_index = (uint32_t)kd->comm->device;
	qc.depth = depth;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_CREATE, &qc);
	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "QUEUE_CREATE on device %d failed: %s",
			 kd->comm->device, strerror(-err));
		return err;
	}
	r->handle = qc.out_handle;
	r->map = mmap(NULL, qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, kd->fd,
		      (off_t)qc.out_mmap_offset);
	if (r->map == MAP_FAILED) {
		err = -errno;
		r->map = NULL;
		snprintf(pr->reason, sizeof(pr->reason), "mmap of the queue failed: %s",
			 strerror(-err));
		return err;
	}
	r->map_size = qc.out_mmap_size;
	r->khdr = r->map;
	if (r->khdr->magic != NCCOM_RING_MAGIC || r->khdr->version != NCCOM_RING_VERSION ||
	    r->khdr->depth != depth) {
		snprintf(pr->reason, sizeof(pr->reason), "queue mapping has magic %#x version %u depth %u; expected %#x %u %u",
			 r->khdr->magic, r->khdr->version, r->khdr->depth, NCCOM_RING_MAGIC,
			 NCCOM_RING_VERSION, depth);
		return -EPROTO;
	}
	r->depth = depth;
	r->mask = depth - 1;
	r->ksqes = (struct nccom_desc *)((char *)r->map + qc.out_sq_offset);
	r->kcqes = (struct nccom_cqe *)((char *)r->map + qc.out_cq_offset);
	r->sq_tail = r->sq_published = __atomic_load_n(&r->khdr->sq_tail, __ATOMIC_RELAXED);
	r->cq_head = __atomic_load_n(&r->khdr->cq_head, __ATOMIC_RELAXED);
	return 0;
}

static int kdev_sem_create(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	struct nccom_sem_create sc = { .size = sizeof(sc) };
	int err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_CREATE, &sc);

	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "SEM_CREATE failed: %s", strerror(-err));
		return err;
	}
	kd->sem = sc.out_handle;
	return 0;
}

static int kdev_probe_local(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	int err;

	if (kd->comm->device < 0) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "this rank is bound to no nccom device (config.device/CCOM_DEVICE -1, or no device)");
		return -ENODEV;
	}
	err = kdev_open(kd, pr);
	if (!err && (uint32_t)kd->comm->device >= kd->info.dev_count) {
		snprintf(pr->reason, sizeof(pr->reason), "device %d does not exist (%u devices)",
			 kd->comm->device, kd->info.dev_count);
		err = -ENODEV;
	}
	if (!err)
		err = kdev_ring_create(kd, pr);
	if (!err)
		err = kdev_sem_create(kd, pr);
	return err;
}

/* Exchange semaphore grants with every local peer. */
static int kdev_exchange_sems(struct ccom_kdev *kd)
{
	struct nccom_sem_export ex = { .size = sizeof(ex), .handle = kd->sem };
	struct ccom_kdev_hello h = { CCOM_KDEV_HELLO_MAGIC, kd->comm->rank }, in;
	int l, fd, n, err;

	err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_EXPORT, &ex);
	if (err) {
		ccom_set_last_error("kdev: rank %d: SEM_EXPORT failed: %s", kd->comm->rank,
				    strerror(-err));
		return err;
	}
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = ccom_kdev_sendmsg(kd, l, &h, sizeof(h), &ex.out_fd, 1);
	close(ex.out_fd);
	for (l = 0; !err && l < kd->nlocal; l++) {
		struct nccom_sem_import im = { .size = sizeof(im) };

		if (l == kd->me)
			continue;
		err = ccom_kdev_recvmsg(kd, l, &in, sizeof(in), &fd, 1, &n);
		if (err)
			break;
		if (n != 1 || in.magic != CCOM_KDEV_HELLO_MAGIC ||
		    in.rank != kd->comm->local_to_rank[l]) {
			if (n == 1)
				close(fd);
			ccom_set_last_error("kdev: rank %d: bad semaphore grant from local rank %d",
					    kd->comm->rank, l);
			return -EPROTO;
		}
		im.fd = fd;
		err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_IMPORT, &im);
		close(fd);
		if (err) {
			ccom_set_last_error("kdev: rank %d: SEM_IMPORT of peer rank %d's semaphore failed: %s",
					    kd->comm->rank, in.rank, strerror(-err));
			return err;
		}
		kd->peer_sem[l] = im.out_handle;
	}
	return err;
}

/* ---- lifecycle ---- */

static void kdev_free(struct ccom_kdev *kd)
{
	int l;

	if (!kd)
		return;
	ccom_kdev_grant_fini(kd);
	if (kd->ring.map)
		munmap(kd->ring.map, kd->ring.map_size);
	if (kd->sock) {
		for (l = 0; l < kd->nlocal; l++)
			if (kd->sock[l] >= 0)
				close(kd->sock[l]);
	}
	/* Closing the fd destroys every handle: queue, semaphores, pins, imports. */
	if (kd->fd >= 0)
		close(kd->fd);
	if (kd->scratch)
		munmap(kd->scratch, kd->scratch_size);
	free(kd->sock);
	free(kd->peer_sem);
	free(kd);
}

static int kdev_mode(void)
{
	const char *v = ccom_param_str("CCOM_KDEV");

	if (!v || !v[0])
		return -1;
	if (!strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1"))
		return 1;
	ccom_warn("CCOM_KDEV=%s is not 0 or 1; treating it as unset (automatic)", v);
	return -1;
}

/*
 * CCOM_KDEV_MAP=1: map peers' grants and run the collectives and Send/Recv
 * from them in userspace (coll/kdev_mapped.c, coll/kdev_p2p.c); auto (the
 * default): map them, and the tuner's race (tune/kdev_race.c) picks the
 * mapped path or the engine per collective and size (kd->map_skip, per
 * op; Send/Recv takes the engine under auto).  Per rank: the schedules of both paths
 * read and write the same buffers at the same semaphore values.
 */
static void kdev_map_mode(struct ccom_kdev *kd)
{
	const char *s = ccom_param_str("CCOM_KDEV_MAP");
	int v = !s || !s[0] || !strcmp(s, "auto") ? 2 : !strcmp(s, "1") ? 1 :
		!strcmp(s, "0") ? 0 : -1;

	if (v < 0) {
		ccom_warn("CCOM_KDEV_MAP=%s is not 0, 1 or auto; treating it as 0", s);
		v = 0;
	}
	if (!v)
		return;
	if (!(kd->info.out_features & NCCOM_FEAT_DMABUF_MMAP)) {
		if (v == 1)
			ccom_warn("rank %d: CCOM_KDEV_MAP=1 but this nccom.ko cannot mmap grants (no NCCOM_FEAT_DMABUF_MMAP); load a newer driver. The engine does the copies",
				  kd->comm->rank);
		return;
	}
	kd->map = true;
	kd->map_mode = v;
	kd->map_skip = v == 2;	/* until the tuner picks the mapped path for an op */
	ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d: %s peers' buffers through mapped grants (CCOM_KDEV_MAP=%s)",
		  kd->comm->rank, v == 1 ? "collectives and Send/Recv read" :
		  "AllReduce may read (where it measures faster)", v == 1 ? "1" : "auto");
}

/* All-gather the probes; 0 if every rank can use kdev, else the first failing rank. */
static int kdev_agree(struct ccomComm *comm, struct kdev_probe *mine, int *bad, bool *slow)
{
	struct kdev_probe *all = calloc((size_t)comm->nranks, sizeof(*all));
	int r, err;

	if (!all)
		return -ENOMEM;
	all[comm->rank] = *mine;
	err = ccom_bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
	*bad = -1;
	*slow = false;
	for (r = 0; !err && r < comm->nranks; r++)
		*slow |= all[r].engine_slow != 0;
	for (r = 0; !err && r < comm->nranks; r++) {
		if (all[r].mode != all[0].mode || all[r].min_bytes != all[0].min_bytes) {
			ccom_set_last_error("CCOM_KDEV/CCOM_KDEV_MIN_BYTES differ between rank 0 (%d/%lld) and rank %d (%d/%lld); set them identically on every rank",
					    all[0].mode, (long long)all[0].min_bytes, r, all[r].mode,
					    (long long)all[r].min_bytes);
			err = -EINVAL;
			break;
		}
	}
	for (r = 0; !err && r < comm->nranks; r++) {
		if (!all[r].ok || all[r].features != all[0].features) {
			*bad = r;
			if (all[r].ok)
				snprintf(all[r].reason, sizeof(all[r].reason),
					 "driver features %#llx differ from rank 0's %#llx",
					 (unsigned long long)all[r].features,
					 (unsigned long long)all[0].features);
			*mine = all[r];
			break;
		}
	}
	free(all);
	return err;
}

static int kdev_not_used(struct ccomComm *comm, int mode, int bad, const char *why)
{
	if (mode == 1) {
		if (bad >= 0)
			ccom_set_last_error("CCOM_KDEV=1 but rank %d cannot use /dev/nccom: %s; load nccom.ko (modprobe nccom) or unset CCOM_KDEV",
					    bad, why);
		else
			ccom_set_last_error("CCOM_KDEV=1 but %s; unset CCOM_KDEV", why);
		return -ENODEV;
	}
	if (mode == 0)
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): CCOM_KDEV=0; using shm",
			  comm->rank);
	else if (bad >= 0)
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): rank %d: %s; using shm",
			  comm->rank, bad, why);
	else
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): %s; using shm", comm->rank,
			  why);
	return 0;
}

/* The most ranks of the communicator on one host (same answer on every rank). */
static int kdev_max_local(const struct ccomComm *comm)
{
	int *n = calloc((size_t)comm->nranks, sizeof(int)), r, max = 0;

	if (!n)
		return comm->local_nranks;
	for (r = 0; r < comm->nranks; r++) {
		int node = comm->rank_to_node[r];

		if (node >= 0 && node < comm->nranks && ++n[node] > max)
			max = n[node];
	}
	free(n);
	return max;
}

int ccom_kdev_comm_init(struct ccomComm *comm)
{
	struct kdev_probe pr = { 0 };
	struct ccom_kdev *kd;
	int mode = kdev_mode(), bad, err, l;

	/* Every early return below depends only on what every rank knows alike. */
	if (comm->nranks == 1)
		return 0;	/* nothing to move between ranks */
	if (comm->nnodes <= 1 && !comm->shm)
		return kdev_not_used(comm, mode, -1,
				     "no shared-memory segment between the ranks (CCOM_TRANSPORT=net?)");
	/* Grants held per peer are a 64-bit mask (regcache.c). */
	if (kdev_max_local(comm) > CCOM_KDEV_MAX_LOCAL)
		return kdev_not_used(comm, mode, -1,
				     "more than 64 ranks of the communicator on one host (kdev supports up to 64)");
	if (kdev_max_local(comm) < 2)
		return kdev_not_used(comm, mode, -1,
				     "no two ranks of the communicator share a host");
	/* Peer info already says whether every rank sees devices: no probe needed then. */
	for (l = 0; mode != 0 && l < comm->nranks; l++)
		if (comm->peers[l].ndevices <= 0)
			return kdev_not_used(comm, mode, l,
					     "no nccom device (/dev/nccom absent: nccom.ko is not loaded)");
	kd = calloc(1, sizeof(*kd));
	if (!kd)
		return -ENOMEM;
	kd->comm = comm;
	kd->fd = -1;
	kd->forced = mode == 1;
	/* Several hosts: Send/Recv with the ranks of this host only (collectives need them all). */
	kd->p2p_only = comm->nnodes > 1;
	kd->nlocal = comm->local_nranks;
	kd->me = comm->local_rank;
	kd->min_bytes = ccom_param_int("CCOM_KDEV_MIN_BYTES");
	kd->sock = malloc((size_t)kd->nlocal * sizeof(int));
	kd->peer_sem = calloc((size_t)kd->nlocal, sizeof(uint32_t));
	if (!kd->sock || !kd->peer_sem) {
		kdev_free(kd);
		return -ENOMEM;
	}
	for (l = 0; l < kd->nlocal; l++)
		kd->sock[l] = -1;
	pr.mode = mode;
	pr.min_bytes = kd->min_bytes;
	if (mode == 0) {
		snprintf(pr.reason, sizeof(pr.reason), "CCOM_KDEV=0");
		err = -ENODEV;
	} else {
		err = kdev_probe_local(kd, &pr);
	}
	if (!err && kd->nlocal > 1 && !comm->shm) {
		snprintf(pr.reason, sizeof(pr.reason),
			 "no shared-memory segment with its local peers (CCOM_TRANSPORT=net?)");
		err = -ENODEV;
	}
	if (!err && mode == -1) {
		bool slow;

		err = ccom_kdev_calibrate(kd, &slow);
		if (err)
			snprintf(pr.reason, sizeof(pr.reason), "the engine calibration copy failed: %s",
				 strerror(-err));
		pr.engine_slow = slow;
	}
	pr.ok = !err;
	pr.err = err;
	if (!err) {
		err = ccom_kdev_grant_init(kd);
		if (err) {
			pr.ok = 0;
			snprintf(pr.reason, sizeof(pr.reason), "out of memory");
		}
	}
	err = kdev_agree(comm, &pr, &bad, &kd->engine_slow);
	if (err || bad >= 0) {
		kdev_free(kd);
		return err ? err : kdev_not_used(comm, mode, bad, pr.reason);
	}
	err = ccom_kdev_connect_mesh(kd);
	if (!err)
		err = kdev_exchange_sems(kd);
	if (!err)
		err = ccom_bootstrap_barrier(comm->bootstrap);
	if (err) {
		kdev_free(kd);
		return err;
	}
	comm->kdev = kd;
	kdev_map_mode(kd);
	ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d uses /dev/nccom device %d (ABI %u, features %#llx, queue depth %u)%s%s",
		  comm->rank, comm->device, kd->info.out_abi_version,
		  (unsigned long long)kd->info.out_features, kd->ring.depth,
		  kd->p2p_only ? " for Send/Recv with the ranks of its host only (the communicator spans several hosts)" : "",
		  kd->forced ? ", forced (CCOM_KDEV=1)" : "");
	return 0;
}

void ccom_kdev_comm_fini(struct ccomComm *comm)
{
	if (!comm->kdev)
		return;
	kdev_free(comm->kdev);
	comm->kdev = NULL;
}

void ccom_kdev_comm_abort(struct ccomComm *comm)
{
	/*
	 * comm->abort_flag is set: the progress thread's wait loop (ring.c)
	 * sees it within one QUEUE_WAIT slice and cancels the queue itself;
	 * destroying handles here would race with its ioctls.
	 */
	(void)comm;
}

void ccom_kdev_cancel(struct ccom_kdev *kd)
{
	if (kd->dead)
		return;
	kd->dead = true;
	/* Queued descriptors complete with -ECANCELED; peers' waits on my semaphore get -EPIPE. */
	kdev_destroy_handle(kd, kd->ring.handle);
	kdev_destroy_handle(kd, kd->sem);
	ccom_kdev_p2p_cancel(kd);
}
