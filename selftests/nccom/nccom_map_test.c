// SPDX-License-Identifier: GPL-2.0
/*
 * Description: mapped grants (mmap of an nccom dma-buf): the peer reads the
 * owner's pages with no copy and sees the owner's later writes; read-only
 * unless exported with NCCOM_MEM_EXPORT_MAP_WRITE (PROT_WRITE, mprotect and
 * MAP_PRIVATE refused); offset/length bounds; the mapping cannot be pinned,
 * read by process_vm_readv or inherited by fork; invalidation when the owner
 * munmaps, mremaps, MADV_DONTNEEDs or exits (the peer's next access raises
 * SIGBUS, a new mmap fails with EFAULT: never a page the owner no longer
 * sees), the owner's fork keeps the mapping coherent, spurious
 * invalidations that keep the pages (a transparent huge page split by a
 * neighbour's madvise or by fork, the zero page replaced while pinning)
 * leave the grant readable, nothing is accounted twice, and the mapping
 * outlives the fd and the handle without leaking.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/uio.h>

#include "nccom_utils.h"

#define NPAGES 16
#define LEN (NPAGES * PAGE_SZ)

static __thread sigjmp_buf probe_env;
static __thread volatile sig_atomic_t probe_signo;

static void probe_handler(int sig)
{
	probe_signo = sig;
	siglongjmp(probe_env, 1);
}

/* Process-wide handlers; each thread jumps back to its own probe. */
static void probe_install(void)
{
	struct sigaction sa = { .sa_handler = probe_handler };

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

/* Reads one byte; returns 0, or the signal the access raised. */
static int probe_read(const volatile uint8_t *p, uint8_t *val)
{
	if (sigsetjmp(probe_env, 1) == 0) {
		*val = *p;
		return 0;
	}
	return probe_signo;
}

static int export_flags(int fd, uint32_t handle, uint32_t flags, int *out_fd)
{
	struct nccom_mem_export_dmabuf cmd = {
		.size = sizeof(cmd), .flags = flags, .handle = handle, .out_fd = -1,
	};
	int rc = ioctl(fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &cmd);

	if (!rc)
		*out_fd = cmd.out_fd;
	return rc;
}

static void *map_grant(int dbfd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, dbfd, off);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(map) {
	int fd;
	struct nccom_info base;
	uint8_t *buf;		/* the owner's registered range */
	uint32_t h;
	int dbfd;		/* read-only grant */
};

FIXTURE_SETUP(map)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	probe_install();
	self->buf = nccom_alloc(LEN);
	ASSERT_NE(NULL, self->buf);
	/* Small pages: the fork test must not depend on a THP split. */
	madvise(self->buf, LEN, MADV_NOHUGEPAGE);
	fill_pattern(self->buf, LEN, 1);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, self->buf, LEN,
			      &self->h);
	ASSERT_EQ(0, export_flags(self->fd, self->h, 0, &self->dbfd));
}

FIXTURE_TEARDOWN(map)
{
	struct nccom_info info;

	close(self->dbfd);
	close(self->fd);
	nccom_free(self->buf, LEN);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_F(map, feature_bit)
{
	EXPECT_TRUE(self->base.out_features & NCCOM_FEAT_DMABUF_MMAP);
}

TEST_F(map, read_only_grant_reads_owner_pages)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);

	ASSERT_NE(NULL, m) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_NE(self->buf, m);
	EXPECT_EQ(0, memcmp(m, self->buf, LEN));
	/* Same pages, not a copy: the owner's later writes show through. */
	fill_pattern(self->buf, LEN, 2);
	EXPECT_EQ(0, memcmp(m, self->buf, LEN));
	EXPECT_ERRNO(EACCES, mprotect(m, LEN, PROT_READ | PROT_WRITE));
	munmap(m, LEN);

	EXPECT_EQ(NULL, map_grant(self->dbfd, LEN, PROT_READ | PROT_WRITE,
				  MAP_SHARED, 0));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(NULL, map_grant(self->dbfd, LEN, PROT_READ, MAP_PRIVATE, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(map, writable_grant)
{
	int wfd;
	uint8_t *m;

	EXPECT_ERRNO(EINVAL, export_flags(self->fd, self->h, 1u << 5, &wfd));
	ASSERT_EQ(0, export_flags(self->fd, self->h, NCCOM_MEM_EXPORT_MAP_WRITE,
				  &wfd));
	m = map_grant(wfd, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	ASSERT_NE(NULL, m) TH_LOG("mmap: %s", strerror(errno));
	fill_pattern(m, LEN, 3);
	EXPECT_EQ(0, memcmp(m, self->buf, LEN));
	munmap(m, LEN);
	close(wfd);
}

TEST_F(map, writable_grant_needs_writable_registration)
{
	uint8_t *ro = nccom_alloc(PAGE_SZ);
	uint32_t h;
	int wfd;

	ASSERT_NE(NULL, ro);
	memset(ro, 1, PAGE_SZ);
	test_cmd_mem_register(NCCOM_MEM_READ, ro, PAGE_SZ, &h);
	EXPECT_ERRNO(EINVAL, export_flags(self->fd, h, NCCOM_MEM_EXPORT_MAP_WRITE,
					  &wfd));
	test_cmd_destroy(h);
	nccom_free(ro, PAGE_SZ);
}

TEST_F(map, bounds)
{
	uint8_t *m;

	/* A window: page 3 on. */
	m = map_grant(self->dbfd, 4 * PAGE_SZ, PROT_READ, MAP_SHARED, 3 * PAGE_SZ);
	ASSERT_NE(NULL, m) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(m, self->buf + 3 * PAGE_SZ, 4 * PAGE_SZ));
	/* VM_DONTEXPAND: cannot grow */
	EXPECT_EQ(MAP_FAILED, mremap(m, 4 * PAGE_SZ, 8 * PAGE_SZ, MREMAP_MAYMOVE));
	munmap(m, 4 * PAGE_SZ);

	EXPECT_EQ(NULL, map_grant(self->dbfd, 2 * PAGE_SZ, PROT_READ, MAP_SHARED,
				  (NPAGES - 1) * PAGE_SZ));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, map_grant(self->dbfd, PAGE_SZ, PROT_READ, MAP_SHARED,
				  NPAGES * PAGE_SZ));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, map_grant(self->dbfd, LEN + PAGE_SZ, PROT_READ,
				  MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(map, mapping_cannot_be_pinned_or_read_remotely)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	uint8_t tmp[64];
	struct iovec local = { tmp, sizeof(tmp) }, remote;

	ASSERT_NE(NULL, m);
	EXPECT_EQ(0, m[0] - self->buf[0]);
	test_err_mem_register(EFAULT, NCCOM_MEM_READ, m, LEN);
	remote.iov_base = m;
	remote.iov_len = sizeof(tmp);
	EXPECT_EQ(-1, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	munmap(m, LEN);
}

TEST_F(map, not_inherited_by_fork)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	int status;
	pid_t pid;

	ASSERT_NE(NULL, m);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t v;

		_exit(probe_read(m, &v) == SIGSEGV ? 0 : 1);
	}
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
	munmap(m, LEN);
}

/* The owner's fork keeps its pinned pages: the peer still sees its writes. */
TEST_F(map, owner_fork_keeps_mapping_coherent)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	int status;
	pid_t pid;
	uint8_t v;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, probe_read(m, &v));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		fill_pattern(self->buf, LEN, 9);	/* the child's own copy */
		_exit(0);
	}
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	fill_pattern(self->buf, LEN, 4);
	for (size_t i = 0; i < LEN; i += PAGE_SZ) {
		ASSERT_EQ(0, probe_read(m + i, &v)) TH_LOG("page %zu", i / PAGE_SZ);
		ASSERT_EQ(self->buf[i], v) TH_LOG("page %zu stale", i / PAGE_SZ);
	}
	EXPECT_EQ(0, memcmp(m, self->buf, LEN));
	munmap(m, LEN);
}

/* Every page of @m must raise SIGBUS. */
static int all_pages_sigbus(const uint8_t *m, size_t len)
{
	uint8_t v;

	for (size_t i = 0; i < len; i += PAGE_SZ)
		if (probe_read(m + i, &v) != SIGBUS)
			return -1;
	return 0;
}

TEST_F(map, owner_munmap_revokes)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	uint8_t v;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, memcmp(m, self->buf, LEN));	/* every PTE present */
	ASSERT_EQ(0, munmap(self->buf + PAGE_SZ, PAGE_SZ));
	EXPECT_EQ(0, all_pages_sigbus(m, LEN));
	EXPECT_EQ(NULL, map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(SIGBUS, probe_read(m, &v));
	munmap(m, LEN);
}

TEST_F(map, owner_mremap_revokes)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	uint8_t *dst = nccom_alloc(LEN);
	void *moved;

	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, dst);
	ASSERT_EQ(0, memcmp(m, self->buf, LEN));
	moved = mremap(self->buf, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved);
	self->buf = moved;
	EXPECT_EQ(0, all_pages_sigbus(m, LEN));
	munmap(m, LEN);
}

TEST_F(map, owner_dontneed_revokes)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, memcmp(m, self->buf, LEN));
	ASSERT_EQ(0, madvise(self->buf, PAGE_SZ, MADV_DONTNEED));
	EXPECT_EQ(0, all_pages_sigbus(m, LEN));
	munmap(m, LEN);
}

/*
 * Cross-process: the owner (child) registers, grants over SCM_RIGHTS, lets
 * the peer read, then munmaps (or exits) and only then tells the peer; the
 * peer's next access must fault.
 */
static void owner_child(int sock, bool exit_instead)
{
	uint8_t *b = nccom_alloc(LEN);
	uint32_t h;
	int fd = nccom_open(), dbfd;
	char c;

	if (!b || fd < 0)
		_exit(2);
	fill_pattern(b, LEN, 7);
	if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, b, LEN, &h) ||
	    export_flags(fd, h, 0, &dbfd) || send_fd(sock, dbfd, 0))
		_exit(3);
	close(dbfd);
	if (read_full(sock, &c, 1))
		_exit(4);
	if (exit_instead)
		_exit(0);	/* the peer learns of it from waitpid */
	if (munmap(b, LEN) || write_full(sock, "u", 1))
		_exit(5);
	if (read_full(sock, &c, 1))
		_exit(6);
	_exit(0);
}

static void owner_goes_away(struct __test_metadata *_metadata, bool exit)
{
	uint8_t *m, want[LEN];
	int sv[2], dbfd, status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		owner_child(sv[1], exit);
	}
	close(sv[1]);
	dbfd = recv_fd(sv[0], NULL);
	ASSERT_LE(0, dbfd);
	m = map_grant(dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	ASSERT_NE(NULL, m);
	fill_pattern(want, LEN, 7);
	EXPECT_EQ(0, memcmp(m, want, LEN));
	ASSERT_EQ(0, write_full(sv[0], "g", 1));
	if (exit) {
		ASSERT_EQ(0, wait_child(pid, &status, 30000));
	} else {
		ASSERT_EQ(0, read_full(sv[0], &c, 1));
	}
	EXPECT_EQ(0, all_pages_sigbus(m, LEN));
	if (!exit) {
		ASSERT_EQ(0, write_full(sv[0], "d", 1));
		ASSERT_EQ(0, wait_child(pid, &status, 30000));
	}
	EXPECT_TRUE(child_ok(status));
	munmap(m, LEN);
	close(dbfd);
	close(sv[0]);
}

TEST_F_TIMEOUT(map, peer_sees_owner_munmap, 60)
{
	owner_goes_away(_metadata, false);
}

TEST_F_TIMEOUT(map, peer_sees_owner_exit, 60)
{
	owner_goes_away(_metadata, true);
}

/* A peer reading in a loop while the owner unmaps: pattern or SIGBUS. */
struct reader {
	const uint8_t *m;
	const uint8_t *want;
	volatile int stop;
	int bad;		/* a byte that was neither */
	int faulted;
	unsigned long rounds;
};

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	uint8_t v;

	while (!r->stop && !r->faulted) {
		for (size_t i = 0; i < LEN; i += 64) {
			int sig = probe_read(r->m + i, &v);

			if (sig == SIGBUS) {
				r->faulted = 1;
				break;
			}
			if (sig || v != r->want[i]) {
				r->bad = 1;
				return NULL;
			}
		}
		r->rounds++;
	}
	return NULL;
}

TEST_F_TIMEOUT(map, munmap_during_reads, 60)
{
	uint8_t *want = malloc(LEN);
	struct reader r = { 0 };
	pthread_t t;
	uint8_t v;

	ASSERT_NE(NULL, want);
	memcpy(want, self->buf, LEN);
	r.m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	r.want = want;
	ASSERT_NE(NULL, r.m);
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_thread, &r));
	while (!r.rounds)
		usleep(100);
	ASSERT_EQ(0, munmap(self->buf, LEN));
	/* After munmap returns, no access may succeed. */
	EXPECT_EQ(SIGBUS, probe_read(r.m + LEN - 1, &v));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.bad);
	EXPECT_EQ(1, r.faulted);
	munmap((void *)r.m, LEN);
	self->buf = nccom_alloc(LEN);	/* for the teardown's munmap */
	free(want);
}

/*
 * Spurious invalidations: the kernel calls the notifier with
 * MMU_NOTIFY_CLEAR where the owner's pages stay mapped (the split of a
 * transparent huge page's PMD when the owner madvise()s, mprotect()s or
 * forks part of it; the copy-on-write break of the zero page when the
 * registration pins a read-only touched buffer). The grant must survive
 * them: the peer's next access revalidates instead of raising SIGBUS.
 */
#define HPAGE_SZ (2UL << 20)

/* KiB of AnonHugePages in the VMA holding @p, or -1 if unreadable. */
static long anon_huge_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long lo, hi;
	bool in = false;
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* A 2 MiB-aligned, filled huge page of anonymous memory, or NULL. */
static uint8_t *thp_alloc(void **base)
{
	uint8_t *p = nccom_alloc(2 * HPAGE_SZ), *h;

	*base = p;
	if (!p)
		return NULL;
	h = (uint8_t *)(((uintptr_t)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	madvise(h, HPAGE_SZ, MADV_HUGEPAGE);
	fill_pattern(h, HPAGE_SZ, 11);
	return h;
}

/* Registers and grants the first half of @h; returns the peer's mapping. */
static uint8_t *thp_grant(struct __test_metadata *_metadata, int fd, uint8_t *h,
			  uint32_t *handle, int *dbfd)
{
	uint8_t *m;

	if (_test_cmd_mem_register(fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, h,
				   HPAGE_SZ / 2, handle) ||
	    export_flags(fd, *handle, 0, dbfd))
		return NULL;
	m = map_grant(*dbfd, HPAGE_SZ / 2, PROT_READ, MAP_SHARED, 0);
	if (m && memcmp(m, h, HPAGE_SZ / 2))
		TH_LOG("grant differs from the owner's pages before the split");
	return m;
}

/* Every page of @m reads without a signal and equals @want. */
static int all_pages_match(const uint8_t *m, const uint8_t *want, size_t len)
{
	uint8_t v;

	for (size_t i = 0; i < len; i += PAGE_SZ)
		if (probe_read(m + i, &v) || v != want[i])
			return -1;
	return memcmp(m, want, len) ? -1 : 0;
}

/* The first half of a transparent huge page registered, granted and mapped. */
FIXTURE(thp) {
	int fd;
	void *base;		/* the mapping that holds the huge page */
	uint8_t *h;		/* the huge page */
	uint8_t *m;		/* the peer's mapping of the grant */
	uint32_t handle;
	int dbfd;
};

FIXTURE_SETUP(thp)
{
	self->dbfd = -1;
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	probe_install();
	self->h = thp_alloc(&self->base);
	ASSERT_NE(NULL, self->h);
	if (anon_huge_kb(self->h) < 2048)
		SKIP(return, "no transparent huge page for the buffer (THP disabled?)");
	self->m = thp_grant(_metadata, self->fd, self->h, &self->handle, &self->dbfd);
	ASSERT_NE(NULL, self->m);
}

FIXTURE_TEARDOWN(thp)
{
	if (self->m)
		munmap(self->m, HPAGE_SZ / 2);
	if (self->dbfd >= 0)
		close(self->dbfd);
	if (self->base)
		nccom_free(self->base, 2 * HPAGE_SZ);
	close(self->fd);	/* destroys the registration */
}

TEST_F(thp, split_keeps_grant)
{
	/* Outside the registration, inside its huge page: splits the PMD. */
	ASSERT_EQ(0, madvise(self->h + HPAGE_SZ - PAGE_SZ, PAGE_SZ, MADV_DONTNEED));
	EXPECT_GT(2048, anon_huge_kb(self->h)) TH_LOG("the PMD was not split");
	EXPECT_EQ(0, all_pages_match(self->m, self->h, HPAGE_SZ / 2))
		TH_LOG("the grant did not survive a split that kept its pages");
	fill_pattern(self->h, HPAGE_SZ / 2, 12);
	EXPECT_EQ(0, all_pages_match(self->m, self->h, HPAGE_SZ / 2))
		TH_LOG("the peer no longer sees the owner's writes");
	/* A real change after that still revokes. */
	ASSERT_EQ(0, madvise(self->h, PAGE_SZ, MADV_DONTNEED));
	EXPECT_EQ(0, all_pages_sigbus(self->m, HPAGE_SZ / 2));
}

/* Forking splits a pinned huge page's PMD in the owner. */
TEST_F(thp, owner_fork_keeps_grant)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		fill_pattern(self->h, HPAGE_SZ, 13);	/* the child's own copy */
		_exit(0);
	}
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
	fill_pattern(self->h, HPAGE_SZ / 2, 14);
	EXPECT_EQ(0, all_pages_match(self->m, self->h, HPAGE_SZ / 2))
		TH_LOG("the grant did not survive the owner's fork");
}

/* Pinning for write replaces the zero page a read mapped: same range. */
TEST_F(map, zero_page_registration_maps)
{
	uint8_t *b = nccom_alloc(LEN), *m;
	volatile uint8_t sum = 0;
	uint32_t h2;
	int dbfd;

	ASSERT_NE(NULL, b);
	madvise(b, LEN, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < LEN; i += PAGE_SZ)
		sum += ((volatile uint8_t *)b)[i];
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, LEN, &h2);
	ASSERT_EQ(0, export_flags(self->fd, h2, 0, &dbfd));
	m = map_grant(dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	ASSERT_NE(NULL, m) TH_LOG("mmap of a grant pinned from the zero page: %s",
				  strerror(errno));
	fill_pattern(b, LEN, 15);
	EXPECT_EQ(0, all_pages_match(m, b, LEN));
	munmap(m, LEN);
	close(dbfd);
	test_cmd_destroy(h2);
	nccom_free(b, LEN);
	(void)sum;
}

TEST_F(map, no_double_accounting)
{
	struct nccom_info before, after;
	uint8_t *m;

	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &before));
	m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, memcmp(m, self->buf, LEN));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &after));
	EXPECT_EQ(before.out_pinned_pages, after.out_pinned_pages);
	munmap(m, LEN);
}

/* The VMA holds the dma-buf: it outlives the fd and the registration. */
TEST_F(map, mapping_outlives_fd_and_handle)
{
	uint8_t *m = map_grant(self->dbfd, LEN, PROT_READ, MAP_SHARED, 0);
	uint8_t want[LEN];

	ASSERT_NE(NULL, m);
	memcpy(want, self->buf, LEN);
	close(self->dbfd);
	self->dbfd = -1;
	test_cmd_destroy(self->h);
	EXPECT_EQ(0, memcmp(m, want, LEN));
	munmap(m, LEN);
}

TEST_HARNESS_MAIN
