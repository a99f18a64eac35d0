// SPDX-License-Identifier: MIT
/*
 * publish.c - the writer side of the per-communicator state file
 * (ccom_pubstate.h): directory checks, creation (temp name, flock, fill, rename),
 * registration of the state block with the nccom driver, seqlocked
 * stage/error updates and removal.  Nothing here runs per operation: the op
 * counters are the inline helpers of publish.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <linux/nccom.h>

#include "core/comm.h"
#include "publish/publish.h"
#include "util/log.h"
#include "util/params.h"

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The directory is shared by all users (mode 1777 like /tmp).  Refuse one
 * that another unprivileged user could have planted: it must be a real
 * directory owned by root or by us, and sticky if others may write to it.
 */
static int publish_dir_check(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 01777) == 0) {
		/* mkdir honours the umask: set the mode explicitly. */
		if (chmod(dir, 01777))
			return -errno;
	} else if (errno != EEXIST) {
		return -errno;
	}
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return -EPERM;
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return -EPERM;
	return 0;
}

static void seq_begin(struct nccom_comm_state *st)
{
	uint32_t s = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&st->seq, s + 1, __ATOMIC_RELAXED);
	/* Pairs with the acquire fence (smp_rmb) of the reader before its re-check of seq. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_end(struct nccom_comm_state *st)
{
	uint32_t s = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);

	/* Pairs with the reader's acquire load of seq before it copies. */
	__atomic_store_n(&st->seq, s + 1, __ATOMIC_RELEASE);
}

_Static_assert(CCOM_PUB_COMM_NAME_LEN == CCOM_COMM_NAME_MAX,
	       "the published name holds every valid commName");

static void publish_fill(struct ccom_pub_file *f, const struct ccomComm *comm)
{
	f->version = CCOM_PUB_VERSION;
	f->size = sizeof(*f);
	f->comm_hash = comm->comm_hash;
	f->rank = comm->rank;
	f->nranks = comm->nranks;
	f->pid = (int32_t)getpid();
	f->device = comm->device;
	f->start_ns = realtime_ns();
	f->state.stage = NCCOM_NL_STAGE_NONE;
	f->state.stage_time_ns = f->start_ns;
	if (gethostname(f->host, sizeof(f->host) - 1))
		snprintf(f->host, sizeof(f->host), "?");
	/* Validated at init: fits, no control characters. */
	snprintf(f->comm_name, sizeof(f->comm_name), "%s", comm->name);
	/* Readers ignore the file until the magic is there. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	f->magic = CCOM_PUB_MAGIC;
}

/* Create, lock, map and fill the file under a temporary name, then rename. */
static int publish_create(struct ccom_publish *p, const char *dir, const struct ccomComm *comm)
{
	char tmp[sizeof(p->path)];
	void *map;
	int n, err;

	n = snprintf(p->path, sizeof(p->path), "%s/%016llx.%d.%d", dir,
		     (unsigned long long)comm->comm_hash, comm->rank, (int)getpid());
	if (n < 0 || n >= (int)sizeof(p->path) - 5) {
		p->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	snprintf(tmp, sizeof(tmp), "%s/.tmp.%d.%d", dir, (int)getpid(), comm->rank);
	unlink(tmp);
	p->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (p->fd < 0)
		return -errno;
	if (fchmod(p->fd, 0644) || flock(p->fd, LOCK_SH) || ftruncate(p->fd, CCOM_PUB_FILE_SIZE)) {
		err = -errno;
		goto err_unlink;
	}
	map = mmap(NULL, CCOM_PUB_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto err_unlink;
	}
	p->file = map;
	p->state = &p->file->state;
	publish_fill(p->file, comm);
	if (rename(tmp, p->path)) {
		err = -errno;
		munmap(map, CCOM_PUB_FILE_SIZE);
		p->file = NULL;
		p->state = NULL;
		goto err_unlink;
	}
	return 0;

err_unlink:
	unlink(tmp);
	close(p->fd);
	p->fd = -1;
	p->path[0] = '\0';
	return err;
}

/* No state file: a shared anonymous page holds the block for the driver alone. */
static int publish_anon(struct ccom_publish *p)
{
	void *map = mmap(NULL, CCOM_PUB_FILE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED)
		return -errno;
	p->anon = map;
	p->state = map;
	p->state->stage = NCCOM_NL_STAGE_NONE;
	p->state->stage_time_ns = realtime_ns();
	return 0;
}

/*
 * Register the state block with the driver on a descriptor of our own.
 * Returns 0, or -errno with *why naming the reason in a few words.
 */
static int publish_register(struct ccom_publish *p, const struct ccomComm *comm,
			    const char **why)
{
	struct nccom_info info = { .size = sizeof(info) };
	struct nccom_comm_register reg = { .size = sizeof(reg) };
	int err;

	p->dev_fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	if (p->dev_fd < 0) {
		err = -errno;
		*why = err == -ENOENT ? "no /dev/nccom (driver not loaded)" : "cannot open /dev/nccom";
		return err;
	}
	if (ioctl(p->dev_fd, NCCOM_IOC_GET_INFO, &info)) {
		err = -errno;
		*why = "GET_INFO failed";
		goto err_close;
	}
	if (info.out_compat_id != NCCOM_COMPAT_ID) {
		err = -EPROTO;
		*why = "the driver's compat id differs from libccom's (rebuild one of them)";
		goto err_close;
	}
	if (!(info.out_features & NCCOM_FEAT_COMM_REGISTER)) {
		err = -EOPNOTSUPP;
		*why = "the driver has no NCCOM_FEAT_COMM_REGISTER (older nccom.ko)";
		goto err_close;
	}
	reg.comm_hash = comm->comm_hash;
	reg.rank = (uint32_t)comm->rank;
	reg.nranks = (uint32_t)comm->nranks;
	reg.state_uptr = (uintptr_t)p->state;
	reg.state_size = sizeof(*p->state);
	if (ioctl(p->dev_fd, NCCOM_IOC_COMM_REGISTER, &reg)) {
		err = -errno;
		*why = err == -ENOMEM ? "COMM_REGISTER over RLIMIT_MEMLOCK (raise ulimit -l)"
				      : "COMM_REGISTER failed";
		goto err_close;
	}
	p->handle = reg.out_handle;
	return 0;

err_close:
	close(p->dev_fd);
	p->dev_fd = -1;
	return err;
}

static void publish_unregister(struct ccom_publish *p)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = p->handle };

	if (p->dev_fd < 0)
		return;
	if (p->handle && ioctl(p->dev_fd, NCCOM_IOC_DESTROY, &d))
		ccom_info(CCOM_SUBSYS_INIT, "Publish: unregistering from the driver failed: %s",
			  strerror(errno));
	close(p->dev_fd);
	p->dev_fd = -1;
	p->handle = 0;
}

struct ccom_publish *ccom_publish_open(const struct ccomComm *comm)
{
	struct ccom_publish *p;
	const char *dir, *why = "";
	int err;

	if (!comm || ccom_param_int("CCOM_PUBLISH") == 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = -1;
	p->dev_fd = -1;
	p->comm = comm;
	dir = ccom_param_str("CCOM_PUBLISH_DIR");
	if (!dir || !dir[0])
		dir = CCOM_PUB_DEFAULT_DIR;
	err = publish_dir_check(dir);
	if (err) {
		ccom_info(CCOM_SUBSYS_INIT,
			  "Publish: %s unusable (%s): state of comm %016llx rank %d not published; fix the directory (root- or self-owned, sticky if world-writable) or set CCOM_PUBLISH_DIR",
			  dir, strerror(-err), (unsigned long long)comm->comm_hash, comm->rank);
	} else {
		err = publish_create(p, dir, comm);
		if (err)
			ccom_info(CCOM_SUBSYS_INIT, "Publish: cannot create the state file in %s: %s",
				  dir, strerror(-err));
	}
	if (err && publish_anon(p)) {
		free(p);
		return NULL;
	}
	err = publish_register(p, comm, &why);
	if (err) {
		ccom_info(CCOM_SUBSYS_INIT,
			  "Publish: comm %016llx rank %d not registered with the driver: %s (%s)",
			  (unsigned long long)comm->comm_hash, comm->rank, why, strerror(-err));
		if (!p->file) {
			munmap(p->anon, CCOM_PUB_FILE_SIZE);
			free(p);
			return NULL;
		}
	} else if (p->file) {
		p->file->registered = 1;
	}
	ccom_info(CCOM_SUBSYS_INIT, "Publish: state of rank %d in %s%s", comm->rank,
		  p->file ? p->path : "no file",
		  p->handle ? ", registered with the driver" : "");
	return p;
}

void ccom_publish_stage(struct ccom_publish *p, enum nccom_nl_stage stage)
{
	if (!p)
		return;
	seq_begin(p->state);
	p->state->stage = stage;
	p->state->stage_time_ns = realtime_ns();
	seq_end(p->state);
}

void ccom_publish_init_stage(struct ccom_publish *p, int init_stage)
{
	/* core/comm.h's stages in order; NCCOM_NL_STAGE_NONE precedes them. */
	static const enum nccom_nl_stage map[CCOM_INIT_NSTAGES] = {
		[CCOM_STAGE_VALIDATE] = NCCOM_NL_STAGE_VALIDATE,
		[CCOM_STAGE_BOOTSTRAP] = NCCOM_NL_STAGE_BOOTSTRAP,
		[CCOM_STAGE_PEERINFO] = NCCOM_NL_STAGE_PEER_INFO,
		[CCOM_STAGE_RANKS] = NCCOM_NL_STAGE_RANKS,
		[CCOM_STAGE_TOPO] = NCCOM_NL_STAGE_TOPO,
		[CCOM_STAGE_ALIGN] = NCCOM_NL_STAGE_ALIGN,
		[CCOM_STAGE_CONNECT] = NCCOM_NL_STAGE_CONNECT,
		[CCOM_STAGE_BARRIER] = NCCOM_NL_STAGE_BARRIER,
		[CCOM_STAGE_READY] = NCCOM_NL_STAGE_READY,
	};

	if (init_stage < 0 || init_stage >= CCOM_INIT_NSTAGES)
		return;
	/* The device is chosen in the ranks stage: refresh it (one aligned store). */
	if (p && p->file && p->comm)
		__atomic_store_n(&p->file->device, p->comm->device, __ATOMIC_RELAXED);
	ccom_publish_stage(p, map[init_stage]);
}

void ccom_publish_cma(struct ccom_publish *p, const char *why)
{
	char *dst;
	size_t n;

	if (!p || !p->file || !why || !why[0])
		return;
	dst = p->file->cma;
	n = strnlen(why, sizeof(p->file->cma) - 1);
	/* Once, at init: the rest first, then the first byte (readers wait for it). */
	memcpy(dst + 1, why + 1, n - 1);
	dst[n] = '\0';
	__atomic_store_n(&dst[0], why[0], __ATOMIC_RELEASE);
}

void ccom_publish_error(struct ccom_publish *p, int err, const char *msg, int fatal)
{
	if (!p)
		return;
	seq_begin(p->state);
	p->state->last_error = err;
	p->state->error_time_ns = realtime_ns();
	snprintf(p->state->error_msg, sizeof(p->state->error_msg), "%s", msg ? msg : "");
	if (fatal) {
		p->state->stage = NCCOM_NL_STAGE_ERROR;
		p->state->stage_time_ns = p->state->error_time_ns;
	}
	seq_end(p->state);
}

struct ccom_pub_op *ccom_publish_ops_map(struct ccom_publish *p, uint32_t n)
{
	size_t bytes = (size_t)n * sizeof(struct ccom_pub_op);
	void *map;

	if (!p || !p->file || p->ring || !n || (n & (n - 1)))
		return NULL;
	if (ftruncate(p->fd, (off_t)(CCOM_PUB_FILE_SIZE + bytes))) {
		ccom_info(CCOM_SUBSYS_INIT,
			  "Publish: cannot grow %s by the operation ring (%zu bytes): %s; ccomctl will not see the rank's operations",
			  p->path, bytes, strerror(errno));
		return NULL;
	}
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, CCOM_PUB_FILE_SIZE);
	if (map == MAP_FAILED) {
		ccom_info(CCOM_SUBSYS_INIT,
			  "Publish: cannot map the operation ring of %s: %s; ccomctl will not see the rank's operations",
			  p->path, strerror(errno));
		return NULL;
	}
	p->ring = map;
	p->ring_bytes = bytes;
	p->file->ops.offset = CCOM_PUB_FILE_SIZE;
	p->file->ops.entry_size = sizeof(struct ccom_pub_op);
	return p->ring;
}

void ccom_publish_ops_ready(struct ccom_publish *p, uint32_t n)
{
	/* Pairs with the reader's acquire load: the names and offset come first. */
	__atomic_store_n(&p->file->ops.n, n, __ATOMIC_RELEASE);
}

void ccom_publish_close(struct ccom_publish *p)
{
	if (!p)
		return;
	publish_unregister(p);
	if (p->ring)
		munmap(p->ring, p->ring_bytes);
	if (p->file) {
		unlink(p->path);
		munmap(p->file, CCOM_PUB_FILE_SIZE);
		close(p->fd);
	}
	if (p->anon)
		munmap(p->anon, CCOM_PUB_FILE_SIZE);
	free(p);
}
