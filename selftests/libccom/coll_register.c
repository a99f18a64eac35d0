// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommRegister / ccomCommDeregister on the host
 * transports (shm, and TCP with CCOM_TRANSPORT=net), where they only keep
 * a record.  The refused calls, each with its code and a sentence: a NULL
 * buffer or handle pointer, size 0, memory that is not mapped, a range
 * overlapping one registered already, an unknown handle, a handle
 * deregistered twice, a handle of another communicator, a buffer unmapped
 * while registered (ccomInvalidUsage at the deregistration, which still
 * releases it); a range next to another (not overlapping) is accepted.
 * Then the collective matrix (coll_matrix.h) on 2 and 3 ranks with both
 * buffers registered for the whole job, on shm and over TCP, results
 * checked against the reference.
 */
#include <sys/mman.h>

#include "coll_matrix.h"

/* The refused calls and their sentences, on @comm (and @other, another comm of this rank). */
static int reg_negative(ccomComm_t comm, ccomComm_t other, int rank)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *h = NULL, *h2 = NULL, *h3 = NULL;

	T_CHECK(a != MAP_FAILED, "mmap: %s", strerror(errno));
	T_CCOM(ccomCommRegister(comm, NULL, pg, &h), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "buff is NULL"), "sentence: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommRegister(comm, a, pg, NULL), ccomInvalidArgument);
	T_CCOM(ccomCommRegister(comm, a, 0, &h), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "size is 0"), "sentence: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommRegister(NULL, a, pg, &h), ccomInvalidArgument);
	/* A hole in the middle: page 2 unmapped. */
	T_CHECK(munmap(a + 2 * pg, pg) == 0, "munmap: %s", strerror(errno));
	T_CCOM(ccomCommRegister(comm, a, 4 * pg, &h), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "not mapped"), "sentence: %s", ccomGetLastError(NULL));
	T_CHECK(h == NULL, "a refused registration left handle %p", h);
	/* Two neighbours are fine; a third overlapping the first is not. */
	T_CCOM(ccomCommRegister(comm, a, pg + 10, &h), ccomSuccess);
	T_CCOM(ccomCommRegister(comm, a + pg + 10, pg - 10, &h2), ccomSuccess);
	T_CHECK(h && h2 && h != h2, "handles %p and %p", h, h2);
	T_CCOM(ccomCommRegister(comm, a + pg, 1, &h3), ccomInvalidUsage);
	T_CHECK(strstr(ccomGetLastError(NULL), "overlaps registration"), "sentence: %s",
		ccomGetLastError(NULL));
	/* The same range on another communicator is its own record. */
	T_CCOM(ccomCommRegister(other, a, pg + 10, &h3), ccomSuccess);
	/* Unknown, foreign, twice. */
	T_CCOM(ccomCommDeregister(comm, (void *)(uintptr_t)0x7777777), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "not a registration of this communicator"),
		"sentence: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommDeregister(comm, NULL), ccomInvalidArgument);
	T_CCOM(ccomCommDeregister(other, h2), ccomInvalidArgument);
	T_CCOM(ccomCommDeregister(comm, h2), ccomSuccess);
	T_CCOM(ccomCommDeregister(comm, h2), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "deregistered already"), "sentence: %s",
		ccomGetLastError(NULL));
	T_CCOM(ccomCommDeregister(other, h3), ccomSuccess);
	/* Freed while registered: said at the deregistration, released all the same. */
	T_CHECK(munmap(a, 2 * pg) == 0, "munmap: %s", strerror(errno));
	T_CCOM(ccomCommDeregister(comm, h), ccomInvalidUsage);
	T_CHECK(strstr(ccomGetLastError(NULL), "freed or unmapped while registered"),
		"sentence: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommDeregister(comm, h), ccomInvalidArgument);
	munmap(a + 3 * pg, pg);
	(void)rank;
	return T_PASS;
}

static int neg_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm, other;
	int rc;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	/* A second communicator of the same ranks: a split with one color. */
	T_CCOM(ccomCommSplit(comm, 0, rank, &other, NULL), ccomSuccess);
	rc = reg_negative(comm, other, rank);
	/* A registration left at destroy is released with the communicator. */
	if (!rc) {
		static char keep[8192];
		void *h;

		T_CCOM(ccomCommRegister(comm, keep, sizeof(keep), &h), ccomSuccess);
		rc = ct_allreduce_ok(comm, rank, n, (float *)keep, sizeof(keep) / sizeof(float));
	}
	ccomCommDestroy(other);
	ccomCommDestroy(comm);
	return rc;
}

int main(void)
{
	static const char *const envs[][2] = { { NULL, NULL }, { "CCOM_ALGO=ring", "CCOM_TRANSPORT=net" } };
	static const int sizes[] = { 2, 3 };
	struct ct_job j = { 0 };
	double t0;
	int e, i;

	T_CHECK(ct_run(&j, 2, neg_rank, 120) == T_PASS, "the refused calls (above)");
	printf("refused calls: passed\n");
	for (e = 0; e < 2; e++)
		for (i = 0; i < 2; i++) {
			j = (struct ct_job){ .env = { envs[e][0], envs[e][1] }, .big = 1, .reg = 1 };
			t0 = t_now();
			if (ct_run(&j, sizes[i], ct_matrix_rank, 280))
				return T_FAIL;
			printf("%d ranks%s: matrix with registered buffers passed in %.1f s\n", sizes[i],
			       e ? " over TCP" : "", t_now() - t0);
			fflush(stdout);
		}
	return T_PASS;
}
