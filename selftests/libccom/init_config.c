// SPDX-License-Identifier: MIT
/*
 * Description: ccomConfig_t's size rules and the checks of the CCOM_1.3
 * fields, on one-rank communicators.  A caller built against the older
 * 64-byte struct (size CCOM_CONFIG_SIZE_V1), whose memory past those bytes
 * is 0xab garbage where commName / netName / trafficClass now are, inits
 * (a library that read past size would crash on the pointer or refuse the
 * traffic class); so do sizes that cut a new field in half, garbage in
 * the half the caller has (a library that copied the bytes it was given
 * would make a pointer of them).  A larger
 * struct inits when the bytes past ours are zero and is refused naming
 * the newer ccom.h when not.  reserved2, a commName of 64 bytes or with a
 * control character, a netName that names no network (the message lists
 * the valid ones), a trafficClass outside 0-255 are each refused with
 * ccomInvalidArgument and a sentence; their valid edges (63 bytes,
 * "Socket", "", 0 and 255) init.
 */
#include "test_util.h"

/* A struct a newer ccom.h might have: ours and 16 more bytes. */
union big_config {
	ccomConfig_t c;
	unsigned char b[sizeof(ccomConfig_t) + 16];
};

static ccomResult_t init_one(ccomConfig_t *cfg)
{
	ccomUniqueId id;
	ccomComm_t comm = NULL;
	ccomResult_t res;

	res = ccomGetUniqueId(&id);
	if (res != ccomSuccess)
		return res;
	res = ccomCommInitRankConfig(&comm, 1, id, 0, cfg);
	if (comm)
		ccomCommDestroy(comm);
	return res;
}

/* Init with @cfg must give @want and, when refused, a message with @word. */
static int expect(const char *what, ccomConfig_t *cfg, ccomResult_t want, const char *word)
{
	ccomResult_t res = init_one(cfg);
	const char *e = ccomGetLastError(NULL);

	T_CHECK(res == want, "%s: init returned %s, want %s: %s", what, ccomGetErrorString(res),
		ccomGetErrorString(want), e);
	T_CHECK(!word || strstr(e, word), "%s: message \"%s\" lacks \"%s\"", what, e, word);
	return 0;
}

static int sizes(void)
{
	ccomConfig_t def = CCOM_CONFIG_INITIALIZER;
	union big_config u;
	/* The caller's size, and where its garbage starts: at a field it cuts. */
	size_t cut[] = { CCOM_CONFIG_SIZE_V1, CCOM_CONFIG_SIZE_V1 + 4,
			 offsetof(ccomConfig_t, netName) + 4, offsetof(ccomConfig_t, trafficClass) + 2 };
	size_t good[] = { CCOM_CONFIG_SIZE_V1, CCOM_CONFIG_SIZE_V1, offsetof(ccomConfig_t, netName),
			  offsetof(ccomConfig_t, trafficClass) };
	unsigned int i;
	char what[64];

	_Static_assert(offsetof(ccomConfig_t, commName) == CCOM_CONFIG_SIZE_V1,
		       "the CCOM_1.3 fields start where the old struct ended");
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		memset(&u, 0xab, sizeof(u));
		memcpy(&u.c, &def, good[i]);
		u.c.size = cut[i];
		snprintf(what, sizeof(what), "old caller, size %zu, garbage past it", cut[i]);
		if (expect(what, &u.c, ccomSuccess, NULL))
			return 1;
	}
	memset(&u, 0, sizeof(u));
	u.c = def;
	u.c.size = sizeof(u);
	if (expect("newer caller, zero tail", &u.c, ccomSuccess, NULL))
		return 1;
	u.b[sizeof(ccomConfig_t) + 3] = 1;
	if (expect("newer caller, a field set past ours", &u.c, ccomInvalidArgument, "newer ccom.h"))
		return 1;
	u.c = def;
	u.c.reserved2 = 7;
	return expect("reserved2", &u.c, ccomInvalidArgument, "reserved2");
}

static int fields(void)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	char name[CCOM_COMM_NAME_MAX + 1];

	memset(name, 'n', sizeof(name));
	name[CCOM_COMM_NAME_MAX] = '\0';
	cfg.commName = name;
	if (expect("commName of 64 bytes", &cfg, ccomInvalidArgument, "longer than 63"))
		return 1;
	name[CCOM_COMM_NAME_MAX - 1] = '\0';
	if (expect("commName of 63 bytes", &cfg, ccomSuccess, NULL))
		return 1;
	cfg.commName = "dp\n0";
	if (expect("commName with a newline", &cfg, ccomInvalidArgument, "control character"))
		return 1;
	cfg.commName = NULL;
	cfg.netName = "infiniband";
	if (expect("netName infiniband", &cfg, ccomInvalidArgument, "ib, socket"))
		return 1;
	cfg.netName = "Socket";
	if (expect("netName Socket", &cfg, ccomSuccess, NULL))
		return 1;
	cfg.netName = "";
	if (expect("netName empty", &cfg, ccomSuccess, NULL))
		return 1;
	cfg.netName = NULL;
	cfg.trafficClass = 256;
	if (expect("trafficClass 256", &cfg, ccomInvalidArgument, "[0, 255]"))
		return 1;
	cfg.trafficClass = -1;
	if (expect("trafficClass -1", &cfg, ccomInvalidArgument, "[0, 255]"))
		return 1;
	cfg.trafficClass = 0;
	if (expect("trafficClass 0", &cfg, ccomSuccess, NULL))
		return 1;
	cfg.trafficClass = 255;
	return expect("trafficClass 255", &cfg, ccomSuccess, NULL);
}

static int body(int rank, int nranks, void *arg)
{
	(void)rank;
	(void)nranks;
	(void)arg;
	return sizes() || fields();
}

int main(void)
{
	int code = 0;

	setenv("CCOM_PUBLISH", "0", 1);
	/* In a child: the checks start libccom threads (the root) in their process. */
	T_CHECK(!t_fork_ranks(1, body, NULL, &code, 120), "config checks failed (exit %d)", code);
	printf("PASS: old/new config sizes and the commName/netName/trafficClass checks\n");
	return T_PASS;
}
