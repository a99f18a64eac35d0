// SPDX-License-Identifier: MIT
/*
 * Description: unique ids and handshakes without a working getrandom().
 * This program defines getrandom() itself, so libccom (linked statically)
 * calls it:
 * - every first call of a fill fails with EINTR: libccom retries each one
 *   (the same buffer is asked again) and ccomGetUniqueId and a 1-rank init work;
 * - every call fails with ENOSYS: ccomGetUniqueId fails with a sentence
 *   naming getrandom(), and a rank whose id was made before cannot make
 *   the nonce of its handshake: ccomCommInitRank fails naming getrandom()
 *   (there is no time/pid fallback; before, it went on with one).
 */
#include <sys/random.h>
#include <sys/syscall.h>

#include "test_util.h"

static int mode;	/* 0 real, 1 EINTR first, 2 always ENOSYS */
static int eintrs, retried, interrupted;
static void *last_buf;
static size_t last_len;

/* With mode 1, every other call fails with EINTR; a retry is the same fill asked again. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	if (mode == 2) {
		errno = ENOSYS;
		return -1;
	}
	if (interrupted && buf == last_buf && len == last_len)
		retried++;
	if (mode == 1 && !interrupted) {
		interrupted = 1;
		last_buf = buf;
		last_len = len;
		eintrs++;
		errno = EINTR;
		return -1;
	}
	interrupted = 0;
	return syscall(SYS_getrandom, buf, len, flags);
}

int main(void)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;

	setenv("CCOM_BOOTSTRAP_TIMEOUT", "10", 1);
	mode = 1;
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(ccomCommInitRank(&comm, 1, id, 0), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	mode = 0;
	T_CHECK(eintrs > 0 && retried == eintrs, "%d of %d fills interrupted by EINTR were retried",
		retried, eintrs);
	printf("EINTR: %d interrupted getrandom() calls, each retried; id and init work\n", eintrs);

	mode = 2;
	res = ccomGetUniqueId(&id);
	T_CHECK(res != ccomSuccess, "ccomGetUniqueId succeeded without getrandom()");
	T_CHECK(t_has_words(ccomGetLastError(NULL), "getrandom() failed", NULL), "message: %s",
		ccomGetLastError(NULL));
	printf("ENOSYS: ccomGetUniqueId: %s: %s\n", ccomGetErrorString(res), ccomGetLastError(NULL));

	mode = 0;
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	mode = 2;
	res = ccomCommInitRank(&comm, 1, id, 0);
	mode = 0;
	T_CHECK(res != ccomSuccess, "a rank initialised without a random nonce");
	T_CHECK(t_has_words(ccomGetLastError(NULL), "getrandom() failed", NULL), "message: %s",
		ccomGetLastError(NULL));
	printf("ENOSYS: ccomCommInitRank: %s: %s\n", ccomGetErrorString(res), ccomGetLastError(NULL));
	ccomCommDestroy(comm);
	return T_PASS;
}
