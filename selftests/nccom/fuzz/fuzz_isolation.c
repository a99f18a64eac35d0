// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the isolation probes of the nccom fuzzer's workers, run on
 * each message received from the peer worker (another process, often
 * another uid): the peer's handle numbers must name nothing in this
 * worker's fd unless they alias one of its own objects (ENOENT from
 * SEM_READ, QUEUE_GET_STATE, MEM_EXPORT_DMABUF and DESTROY), and an
 * unprivileged worker must not open another uid's fds through /proc, and
 * a peer's handle used as an mmap offset maps nothing (memory is mapped
 * only through a dma-buf grant). The peer's queue mmap offsets are probed
 * by the ring half (fuzz_ring.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "fuzz.h"

/*
 * Memory is mapped only through a dma-buf grant: a peer's handle number
 * used as an mmap offset of /dev/nccom (where queues are mapped) maps
 * nothing, whatever the handle names in the peer.
 */
static void fz_probe_mmap_handle(int fi, uint32_t h)
{
	void *p;

	fz_add(&fz_sh->isolation, 1);
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fz_w.f[fi].fd, (off_t)h << 32);
	fz_cov_x(FZ_X_MMAP, p == MAP_FAILED ? -1 : 0, errno);
	if (p != MAP_FAILED) {
		fz_finding("mmap of the peer's handle %u on our fd succeeded", h);
		munmap(p, PG);
	}
}

/* Asserts the isolation probes of @m, just received from the peer, on fd slot @fi. */
void fz_probe_peer(int fi, const struct fz_msg *m)
{
	int i;

	/* The peer's handle numbers name nothing in this fd unless they alias ours. */
	for (i = 0; i < 8; i++) {
		uint32_t h = m->handles[i];
		struct nccom_sem_read s = { .size = sizeof(s), .handle = h };
		struct fobj *o = fz_obj_find(fi, h);

		if (!h || (o && o->type == O_SEM))
			continue;
		fz_add(&fz_sh->isolation, 1);
		fz_xioctl(fz_w.f[fi].fd, 12, &s, M_NONE, ENOENT, "peer's handle");
		if (!o) {
			struct nccom_queue_get_state g = { .size = sizeof(g), .handle = h };
			struct nccom_mem_export_dmabuf e = { .size = sizeof(e), .handle = h };

			fz_xioctl(fz_w.f[fi].fd, 7, &g, M_NONE, ENOENT, "peer's handle");
			fz_xioctl(fz_w.f[fi].fd, 3, &e, M_NONE, ENOENT, "peer's handle");
			fz_probe_mmap_handle(fi, h);
			if (fz_chance(&fz_w.r, 30)) {
				struct nccom_destroy d = { .size = sizeof(d), .handle = h };

				fz_xioctl(fz_w.f[fi].fd, 1, &d, M_NONE, ENOENT, "peer's handle");
			}
		}
	}
	/* Another uid's fds must not be reachable through /proc. */
	if (m->uid != geteuid() && geteuid() != 0) {
		for (i = 0; i < 4; i++) {
			char path[64];
			int pfd;

			if (m->fdnums[i] < 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%u/fd/%d", m->pid, m->fdnums[i]);
			fz_add(&fz_sh->isolation, 1);
			pfd = open(path, O_RDWR | O_CLOEXEC);
			fz_cov_x(FZ_X_PROCFD, pfd < 0 ? -1 : 0, errno);
			if (pfd >= 0) {
				fz_finding("opened another uid's fd %s", path);
				close(pfd);
			}
		}
	}
}
