// SPDX-License-Identifier: MIT
/*
 * Description: duplicate-device detection after the peer-info all-gather.
 * Without a driver the test hook CCOM_TEST_FORCE_DEVICE binds ranks to a
 * device index.  Two ranks of one host on device 0 must both fail with
 * ccomInvalidUsage and a message naming both ranks, the device and
 * CCOM_MULTI_RANK_DEVICE; CCOM_MULTI_RANK_DEVICE=1 allows it; distinct
 * devices (CCOM_DEVICE) or distinct hosts (CCOM_HOSTID) are fine and
 * ccomCommDevice() reports the device; config.device < -1 is refused.
 */
#include "test_util.h"

static ccomUniqueId id;

enum mode { DUP, DUP_ALLOWED, DISTINCT, OTHER_HOSTS };

static int rank_main(int rank, int nranks, void *arg)
{
	enum mode m = *(enum mode *)arg;
	char v[16];
	ccomComm_t comm;
	ccomResult_t res;
	int dev;

	(void)nranks;
	if (m == DISTINCT) {
		snprintf(v, sizeof(v), "%d", rank + 3);
		setenv("CCOM_DEVICE", v, 1);
	} else {
		setenv("CCOM_TEST_FORCE_DEVICE", "0", 1);
	}
	if (m == DUP_ALLOWED)
		setenv("CCOM_MULTI_RANK_DEVICE", "1", 1);
	if (m == OTHER_HOSTS) {
		snprintf(v, sizeof(v), "host%d", rank);
		setenv("CCOM_HOSTID", v, 1);
	}
	res = ccomCommInitRank(&comm, nranks, id, rank);
	if (m == DUP) {
		T_CHECK(res == ccomInvalidUsage, "rank %d: got %d (%s)", rank, res,
			ccomGetErrorString(res));
		T_CHECK(t_has_words(ccomGetLastError(NULL), "duplicate device", "rank 0 and rank 1",
				    "nccom device 0", "CCOM_MULTI_RANK_DEVICE=1", NULL), "message");
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		return 0;
	}
	T_CHECK(res == ccomSuccess, "mode %d rank %d: %s", m, rank, ccomGetLastError(NULL));
	T_CCOM(ccomCommDevice(comm, &dev), ccomSuccess);
	T_CHECK(dev == (m == DISTINCT ? rank + 3 : 0), "device %d", dev);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	static const char *const names[] = { "same device", "same device, CCOM_MULTI_RANK_DEVICE=1",
					     "distinct devices", "same device on two hosts" };
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomComm_t c;
	enum mode m;

	for (m = DUP; m <= OTHER_HOSTS; m++) {
		int codes[2];

		T_CHECK(!t_fork_ranks_id(2, rank_main, &m, codes, 60, &id), "%s: ranks failed %d %d",
			names[m], codes[0], codes[1]);
		printf("%s: as expected\n", names[m]);
	}
	cfg.device = -5;
	T_CCOM(ccomCommInitRankConfig(&c, 1, id, 0, &cfg), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "device -5", NULL), "message");
	return T_PASS;
}
