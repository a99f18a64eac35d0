// SPDX-License-Identifier: GPL-2.0
/*
 * Description: timeline semaphores and lifetimes: waits that time out, are
 * already satisfied or are satisfied by another process (semaphore fd sent
 * over SCM_RIGHTS), killable and interruptible waits, poll() and read() on
 * a semaphore fd, the owner going away (-EPIPE for waiters, signals and
 * SEM_WAIT descriptors), and death: a child with in-flight work and a
 * waiter on its semaphore is SIGKILLed, the waiter gets -EPIPE within 2 s
 * and every counter returns to its baseline.
 */
#include <pthread.h>
#include <stdlib.h>

#include "nccom_utils.h"

FIXTURE(sem) {
	int fd;
	struct nccom_info base;
	uint32_t sem;
};

FIXTURE_SETUP(sem)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	test_cmd_sem_create(0, &self->sem);
}

FIXTURE_TEARDOWN(sem)
{
	struct nccom_info info;

	close(self->fd);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_F(sem, create_signal_read)
{
	uint64_t v = 1;
	uint32_t alive = 0, s2;

	test_cmd_sem_read(self->sem, &v, &alive);
	EXPECT_EQ(0, v);
	EXPECT_EQ(1, alive);
	test_cmd_sem_signal(self->sem, 5);
	test_cmd_sem_signal(self->sem, 5);
	test_cmd_sem_signal(self->sem, ~0ULL - 1);
	test_cmd_sem_read(self->sem, &v, NULL);
	EXPECT_EQ(~0ULL - 1, v);
	test_err_sem_signal(EINVAL, self->sem, 6);
	test_cmd_sem_create(~0ULL, &s2);
	test_cmd_sem_read(s2, &v, NULL);
	EXPECT_EQ(~0ULL, v);
}

TEST_F(sem, wait_satisfied_and_timeout)
{
	uint64_t deadline, out = 0;

	test_cmd_sem_signal(self->sem, 3);
	test_cmd_sem_wait(self->sem, 3, 0);
	test_cmd_sem_wait(self->sem, 2, deadline_ms(1000));
	/* timeout 0 never sleeps */
	test_err_sem_wait(ETIMEDOUT, self->sem, 4, 0);
	/* a deadline in the past */
	test_err_sem_wait(ETIMEDOUT, self->sem, 4, 1);
	deadline = deadline_ms(150);
	EXPECT_ERRNO(ETIMEDOUT, _test_cmd_sem_wait(self->fd, self->sem, 4, deadline, &out));
	EXPECT_EQ(3, out);
	/* The wait did not return before its deadline. */
	EXPECT_LE(deadline, now_ns());
}

/* B gets the semaphore fd over a Unix socket and signals; A waits. */
TEST_F_TIMEOUT(sem, wait_satisfied_by_other_process, 90)
{
	int sv[2], semfd, status;
	uint64_t out = 0;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	test_cmd_sem_export(self->sem, &semfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = nccom_open(), sfd;
		uint32_t h, tag;

		close(sv[0]);
		close(semfd);
		sfd = recv_fd(sv[1], &tag);
		if (fd < 0 || sfd < 0 || _test_cmd_sem_import(fd, sfd, &h))
			_exit(2);
		close(sfd);
		usleep(100000);
		if (_test_cmd_sem_signal(fd, h, 10))
			_exit(3);
		_exit(0);
	}
	close(sv[1]);
	ASSERT_EQ(0, send_fd(sv[0], semfd, 1));
	close(semfd);
	ASSERT_EQ(0, _test_cmd_sem_wait(self->fd, self->sem, 7, deadline_ms(20000), &out));
	EXPECT_EQ(10, out);
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
	close(sv[0]);
}

static void on_usr1(int sig)
{
	(void)sig;
}

TEST_F_TIMEOUT(sem, wait_interrupted_and_killed, 90)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	int status;
	pid_t pid;

	/* A caught signal: the wait returns -EINTR. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		sigaction(SIGUSR1, &sa, NULL);
		if (_test_cmd_sem_wait(self->fd, self->sem, 1, deadline_ms(30000), NULL) == -1 &&
		    errno == EINTR)
			_exit(0);
		_exit(1);
	}
	usleep(300000);
	kill(pid, SIGUSR1);
	ASSERT_EQ(0, wait_child(pid, &status, 30000)) TH_LOG("wait not interrupted");
	EXPECT_TRUE(child_ok(status));

	/* SIGKILL: the waiter dies promptly. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		_test_cmd_sem_wait(self->fd, self->sem, 1, deadline_ms(60000), NULL);
		_exit(1);
	}
	usleep(300000);
	kill(pid, SIGKILL);
	ASSERT_EQ(0, wait_child(pid, &status, 30000)) TH_LOG("wait not killable");
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* The semaphore is unaffected. */
	test_cmd_sem_signal(self->sem, 1);
}

TEST_F(sem, poll_and_read)
{
	struct pollfd p;
	uint64_t v, target = 5;
	int semfd;

	test_cmd_sem_export(self->sem, &semfd);
	ASSERT_EQ(sizeof(v), read(semfd, &v, sizeof(v)));
	EXPECT_EQ(0, v);
	/* Short reads/writes are refused. */
	EXPECT_EQ(-1, read(semfd, &v, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(semfd, &v, 4));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(sizeof(target), write(semfd, &target, sizeof(target)));
	p.fd = semfd;
	p.events = POLLIN;
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));
	test_cmd_sem_signal(self->sem, 4);
	EXPECT_EQ(0, poll(&p, 1, 50));
	test_cmd_sem_signal(self->sem, 5);
	ASSERT_EQ(1, poll(&p, 1, 5000));
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_FALSE(p.revents & POLLHUP);
	ASSERT_EQ(sizeof(v), read(semfd, &v, sizeof(v)));
	EXPECT_EQ(5, v);
	/* The owner goes away: POLLHUP. */
	target = 100;
	ASSERT_EQ(sizeof(target), write(semfd, &target, sizeof(target)));
	test_cmd_destroy(self->sem);
	ASSERT_EQ(1, poll(&p, 1, 5000));
	EXPECT_TRUE(p.revents & POLLHUP);
	close(semfd);
}

/* A blocked poll() is woken by a signal from another process. */
TEST_F(sem, poll_woken_by_other_process)
{
	uint64_t target = 2;
	struct pollfd p;
	int semfd, status;
	pid_t pid;

	test_cmd_sem_export(self->sem, &semfd);
	ASSERT_EQ(sizeof(target), write(semfd, &target, sizeof(target)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = nccom_open();
		uint32_t h;

		usleep(200000);
		if (fd < 0 || _test_cmd_sem_import(fd, semfd, &h) ||
		    _test_cmd_sem_signal(fd, h, 2))
			_exit(1);
		_exit(0);
	}
	p.fd = semfd;
	p.events = POLLIN;
	ASSERT_EQ(1, poll(&p, 1, 20000));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
	close(semfd);
}

/* The owner closes its fd: importers see EPIPE everywhere. */
TEST_F(sem, owner_gone)
{
	int fd2 = nccom_open(), semfd;
	uint32_t s, h, alive = 1;
	struct nccom_ring r;
	struct nccom_desc d;
	struct nccom_cqe c;
	uint64_t v;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, _test_cmd_sem_create(fd2, 4, &s));
	ASSERT_EQ(0, _test_cmd_sem_export(fd2, s, &semfd));
	test_cmd_sem_import(semfd, &h);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 4, &r));
	d = desc_sem(NCCOM_OP_SEM_WAIT, h, 9, 1);
	ASSERT_EQ(0, nccom_ring_submit(&r, &d, 1));
	close(fd2);
	/* A parked SEM_WAIT descriptor completes with -EPIPE. */
	ASSERT_EQ(1, nccom_ring_reap(&r, &c, 1, 1, 5000));
	EXPECT_EQ(-EPIPE, c.status);
	test_cmd_sem_read(h, &v, &alive);
	EXPECT_EQ(0, alive);
	EXPECT_EQ(4, v);
	test_err_sem_wait(EPIPE, h, 9, deadline_ms(2000));
	/* A value already reached is still reported as reached. */
	test_cmd_sem_wait(h, 4, 0);
	test_err_sem_signal(EPIPE, h, 10);
	/* Importing after the owner left works and shows a dead semaphore. */
	test_cmd_sem_import(semfd, &h);
	test_cmd_sem_read(h, NULL, &alive);
	EXPECT_EQ(0, alive);
	close(semfd);
	nccom_ring_destroy(&r);
}

struct waiter_arg {
	int fd;
	uint32_t h;
	uint64_t deadline;
	int rc;
	int err;
	uint64_t done_ns;
};

static void *waiter(void *p)
{
	struct waiter_arg *a = p;

	a->rc = _test_cmd_sem_wait(a->fd, a->h, 1000, a->deadline, NULL);
	a->err = errno;
	a->done_ns = now_ns();
	return NULL;
}

/*
 * The victim owns a semaphore and memory, exports both, parks a queue on its
 * own semaphore behind big copies, and is SIGKILLed. Our waiter on the
 * imported semaphore must get -EPIPE within 2 s of the kill.
 */
TEST_F_TIMEOUT(sem, death_with_work_in_flight, 60)
{
	const size_t len = 8 << 20;
	struct waiter_arg wa = { .fd = self->fd };
	int sv[2], semfd, memfd, status;
	struct nccom_info info;
	pthread_t th;
	uint64_t kill_ns;
	uint32_t tag, mh;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = nccom_open(), sfd, dfd;
		uint8_t *a = nccom_alloc(len), *b = nccom_alloc(len);
		struct nccom_desc d[8];
		struct nccom_ring r;
		uint32_t s, s2, ha, hb;
		int i;

		if (fd < 0 || !a || !b)
			_exit(2);
		memset(a, 1, len);
		memset(b, 2, len);
		if (_test_cmd_sem_create(fd, 0, &s) || _test_cmd_sem_create(fd, 0, &s2) ||
		    _test_cmd_sem_export(fd, s, &sfd) ||
		    _test_cmd_mem_register(fd, NCCOM_MEM_READ, a, len, &ha) ||
		    _test_cmd_mem_register(fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, len, &hb) ||
		    _test_cmd_mem_export(fd, hb, &dfd) ||
		    nccom_ring_create(fd, 0, 8, &r))
			_exit(3);
		for (i = 0; i < 4; i++)
			d[i] = desc_copy(hb, 0, ha, 0, len, i);
		d[4] = desc_sem(NCCOM_OP_SEM_WAIT, s2, 1, 4);
		for (i = 5; i < 8; i++)
			d[i] = desc_copy(hb, 0, ha, 0, len, i);
		if (nccom_ring_submit(&r, d, 8))
			_exit(4);
		if (send_fd(sv[1], sfd, 1) || send_fd(sv[1], dfd, 2))
			_exit(5);
		for (;;)
			pause();
	}
	close(sv[1]);
	semfd = recv_fd(sv[0], &tag);
	ASSERT_LE(0, semfd);
	memfd = recv_fd(sv[0], &tag);
	ASSERT_LE(0, memfd);
	test_cmd_sem_import(semfd, &wa.h);
	test_cmd_mem_import(NCCOM_MEM_READ, memfd, 0, 0, &mh);
	wa.deadline = deadline_ms(30000);
	ASSERT_EQ(0, pthread_create(&th, NULL, waiter, &wa));
	usleep(200000);
	kill_ns = now_ns();
	kill(pid, SIGKILL);
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(WIFSIGNALED(status));
	pthread_join(th, NULL);
	EXPECT_EQ(-1, wa.rc);
	EXPECT_EQ(EPIPE, wa.err);
	EXPECT_GT(kill_ns + 2 * NSEC_PER_SEC, wa.done_ns)
		TH_LOG("waiter woke %llu ms after the kill",
		       (unsigned long long)((wa.done_ns - kill_ns) / NSEC_PER_MSEC));
	/* The granted memory stays readable through our import. */
	test_cmd_destroy(mh);
	close(semfd);
	close(memfd);
	close(sv[0]);
	test_cmd_destroy(wa.h);
	/* Everything of the dead process is gone. */
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects + 1,
					 self->base.out_pinned_pages, &info))
		TH_LOG("after the kill: %llu objects, %llu pinned pages",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_HARNESS_MAIN
