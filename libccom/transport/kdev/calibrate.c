// SPDX-License-Identifier: MIT
/*
 * calibrate.c - is the engine's copy fast enough on this machine for the
 * automatic choice?  The tuner's tables (tune/engine.c) were measured on
 * one kernel; on another the driver's copy may be much slower (Debian
 * 12's 6.1 under QEMU TCG ran the kernel's "rep movsb" memcpy 10-40x
 * slower than userspace before nccom.ko timed its copy routine, issue 16).
 * So at the first communicator init after the driver was loaded, one rank
 * times one engine COPY of CALIB_BYTES between two of its own buffers
 * against a userspace memcpy() of the same buffers (best of CALIB_REPS),
 * and the verdict is cached per boot and per driver load in /dev/shm
 * (the name holds the boot id and /dev/nccom's inode and change time,
 * which a reload renews; CCOM_KDEV_CALIB_FILE names another file), so
 * that every later rank reads it instead.
 *
 * The wait sleeps at once, as collectives above 1 MiB do (coll/
 * kdev_sched.c): spinning with sched_yield() on the CPU the engine thread
 * was placed on measured 3-7 ms against 0.4 ms for the copy in a 6.1 TCG
 * guest (CFS gives a yielding task the CPU back), 6.12 did not show it.
 *
 * The engine path moves each byte once where shm moves it twice (copy in,
 * copy out), so the engine is "slow" when its copy takes more than twice
 * memcpy()'s time: then the automatic choice keeps every collective on
 * shm (CCOM_KDEV=1 still forces the engine).
 *
 * The verdict holds for the whole boot, so a "slow" one is confirmed: a
 * transient delay (the engine thread not scheduled for a few ms on a
 * loaded machine) must not keep the engine off until the next reboot.
 * Up to CALIB_CONFIRM more rounds run; each keeps the best times so far,
 * and the engine is slow only if it still is after all of them.  An engine
 * that is really slow (6.1's rep movsb copy: 5x memcpy's time, issue 16)
 * stays slow in every round.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/comm.h"
#include "transport/kdev/kdev.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define CALIB_BYTES (1u << 20)
#define CALIB_REPS 3
#define CALIB_CONFIRM 2
#define CALIB_SLOW_FACTOR 2

int ccom_kdev_load_key(char *buf, size_t len)
{
	char boot[64];
	struct stat st;

	ccom_boot_id(boot, sizeof(boot));
	if (!boot[0] || stat("/dev/nccom", &st))
		return -ENOENT;
	snprintf(buf, len, "%s-%llu-%lld.%09ld", boot, (unsigned long long)st.st_ino,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return 0;
}

/* The cache file's name, or -errno when the key cannot be read. */
static int calib_path(char *buf, size_t len)
{
	char key[128];

	if (ccom_kdev_load_key(key, sizeof(key)))
		return -ENOENT;
	snprintf(buf, len, "/dev/shm/ccom-kdev-calib-%u-%s", (unsigned)getuid(), key);
	return 0;
}

static int calib_register(struct ccom_kdev *kd, void *p, uint32_t access, uint32_t *h)
{
	struct nccom_mem_register mr = { .size = sizeof(mr), .flags = access,
					  .addr = (uintptr_t)p, .length = CALIB_BYTES };
	int err = ccom_kdev_ioctl(kd, NCCOM_IOC_MEM_REGISTER, &mr);

	*h = err ? 0 : mr.out_handle;
	return err;
}

static void calib_destroy(struct ccom_kdev *kd, uint32_t h)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = h };

	if (h)
		(void)ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d);
}

static bool calib_is_slow(int64_t t_engine, int64_t t_memcpy)
{
	return t_engine > CALIB_SLOW_FACTOR * (t_memcpy > 0 ? t_memcpy : 1);
}

/*
 * Best-of times (us) of one engine COPY and one memcpy() of CALIB_BYTES,
 * with up to CALIB_CONFIRM more rounds while the engine looks slow.
 */
static int calib_measure(struct ccom_kdev *kd, int64_t *t_engine, int64_t *t_memcpy)
{
	void *src = NULL, *dst = NULL;
	uint32_t hs = 0, hd = 0;
	int i, round, err;

	*t_engine = *t_memcpy = INT64_MAX;
	if (posix_memalign(&src, 4096, CALIB_BYTES) || posix_memalign(&dst, 4096, CALIB_BYTES)) {
		free(src);
		return -ENOMEM;
	}
	memset(src, 0x5a, CALIB_BYTES);
	memset(dst, 0, CALIB_BYTES);
	err = calib_register(kd, src, NCCOM_MEM_READ, &hs);
	if (!err)
		err = calib_register(kd, dst, NCCOM_MEM_WRITE, &hd);
	for (round = 0; !err && round <= CALIB_CONFIRM; round++) {
		if (round && !calib_is_slow(*t_engine, *t_memcpy))
			break;	/* fast: no confirmation needed */
		for (i = 0; !err && i <= CALIB_REPS; i++) {
			int64_t t0 = ccom_now_us(), t;

			err = ccom_kdev_emit_copy(kd, hd, 0, hs, 0, CALIB_BYTES, CCOM_KDEV_NO_PEER);
			if (!err)
				err = ccom_kdev_publish(kd);
			if (!err)
				err = ccom_kdev_drain(kd, kd->ring.sq_tail, 0, false);
			t = ccom_now_us() - t0;
			if (i && t < *t_engine)	/* the first one warms up */
				*t_engine = t;
		}
		for (i = 0; !err && i <= CALIB_REPS; i++) {
			int64_t t0 = ccom_now_us(), t;

			memcpy(dst, src, CALIB_BYTES);
			__asm__ __volatile__("" : : "r"(dst) : "memory");
			t = ccom_now_us() - t0;
			if (i && t < *t_memcpy)
				*t_memcpy = t;
		}
		if (round)
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: engine calibration, confirmation round %d: best engine copy %lld us, memcpy %lld us",
				  round, (long long)*t_engine, (long long)*t_memcpy);
	}
	calib_destroy(kd, hd);
	calib_destroy(kd, hs);
	free(src);
	free(dst);
	return err;
}

int ccom_kdev_calibrate(struct ccom_kdev *kd, bool *slow)
{
	char path[256];
	long long te = 0, tm = 0;
	int fd, err = 0, v = -1;
	FILE *f;

	*slow = false;
	if (ccom_param_str("CCOM_KDEV_CALIB_FILE"))
		snprintf(path, sizeof(path), "%s", ccom_param_str("CCOM_KDEV_CALIB_FILE"));
	else if (calib_path(path, sizeof(path)))
		return 0;	/* no key: measure nothing, trust the tables */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	/* The first rank measures; the others wait here and read its verdict. */
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return 0;
	}
	f = fdopen(dup(fd), "r");
	if (f) {
		if (fscanf(f, "%lld %lld %d", &te, &tm, &v) != 3)
			v = -1;
		fclose(f);
	}
	if (v < 0) {
		int64_t t_engine, t_memcpy;
		char line[96];
		int n;

		err = calib_measure(kd, &t_engine, &t_memcpy);
		if (!err) {
			te = t_engine;
			tm = t_memcpy;
			v = calib_is_slow(t_engine, t_memcpy);
			n = snprintf(line, sizeof(line), "%lld %lld %d\n", te, tm, v);
			if (ftruncate(fd, 0) || pwrite(fd, line, (size_t)n, 0) != n)
				ccom_info(CCOM_SUBSYS_KDEV, "kdev: could not cache the engine calibration in %s: %s",
					  path, strerror(errno));
		}
	}
	flock(fd, LOCK_UN);
	close(fd);
	if (err) {
		ccom_set_last_error("kdev: rank %d: the engine calibration copy failed: %s; the driver is not usable (reload nccom.ko, or set CCOM_KDEV=0)",
				    kd->comm->rank, strerror(-err));
		return err;
	}
	*slow = v == 1;
	ccom_info(CCOM_SUBSYS_KDEV, "kdev: engine copy of %u KiB %lld us, memcpy %lld us (%s): %s",
		  CALIB_BYTES >> 10, te, tm, path,
		  *slow ? "the engine is more than 2x slower, the automatic choice never picks it (the mapped path is still measured; CCOM_KDEV=1 forces the engine)"
			: "the engine is used as the tables say");
	return 0;
}
