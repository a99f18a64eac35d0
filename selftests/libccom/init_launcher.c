// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommInitFromEnv() with the environment of each
 * supported launcher (CCOM_RANK/CCOM_NRANKS, Open MPI, PMI, Slurm,
 * torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT): 3 forked ranks
 * initialise and get the rank the launcher gave them.  CCOM_RANK wins over
 * OMPI_COMM_WORLD_RANK; no launcher variables, an out-of-range rank or a
 * malformed CCOM_COMM_ID give ccomInvalidArgument with a clear message.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test_util.h"

static const char *const all_vars[] = {
	"CCOM_RANK", "CCOM_NRANKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
	"PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE", "MASTER_ADDR",
	"MASTER_PORT", "CCOM_COMM_ID",
};

struct style {
	const char *name;
	const char *rank_var;
	const char *size_var;
	int torch_addr;
};

static int port;

static void clear_env(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++)
		unsetenv(all_vars[i]);
}

static void setint(const char *var, int v)
{
	char b[16];

	snprintf(b, sizeof(b), "%d", v);
	setenv(var, b, 1);
}

static int rank_main(int rank, int nranks, void *arg)
{
	const struct style *s = arg;
	ccomComm_t comm;
	char addr[64];
	int v;

	clear_env();
	setint(s->rank_var, rank);
	setint(s->size_var, nranks);
	if (s->torch_addr) {
		setenv("MASTER_ADDR", "127.0.0.1", 1);
		setint("MASTER_PORT", port);
	} else {
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		setenv("CCOM_COMM_ID", addr, 1);
	}
	if (!strcmp(s->rank_var, "CCOM_RANK")) {
		/* A conflicting launcher variable must lose against CCOM_RANK. */
		setint("OMPI_COMM_WORLD_RANK", nranks - 1 - rank);
		setint("OMPI_COMM_WORLD_SIZE", nranks);
	}
	T_CCOM(ccomCommInitFromEnv(&comm, NULL), ccomSuccess);
	T_CCOM(ccomCommUserRank(comm, &v), ccomSuccess);
	T_CHECK(v == rank, "%s: rank %d got %d", s->name, rank, v);
	T_CCOM(ccomCommCount(comm, &v), ccomSuccess);
	T_CHECK(v == nranks, "count");
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int test_errors(void)
{
	ccomComm_t comm;

	clear_env();
	T_CCOM(ccomCommInitFromEnv(&comm, NULL), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "no launcher environment", "CCOM_RANK", NULL),
		"message");
	setenv("CCOM_RANK", "5", 1);
	setenv("CCOM_NRANKS", "2", 1);
	T_CCOM(ccomCommInitFromEnv(&comm, NULL), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "CCOM_RANK=5", NULL), "message");
	setenv("CCOM_RANK", "1", 1);
	T_CCOM(ccomCommInitFromEnv(&comm, NULL), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "no rendezvous address", NULL), "message");
	setenv("CCOM_COMM_ID", "nonsense", 1);
	T_CCOM(ccomCommInitFromEnv(&comm, NULL), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "Invalid CCOM_COMM_ID", NULL), "message");
	clear_env();
	return 0;
}

int main(void)
{
	static const struct style styles[] = {
		{ "CCOM_RANK", "CCOM_RANK", "CCOM_NRANKS", 0 },
		{ "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", 0 },
		{ "PMI", "PMI_RANK", "PMI_SIZE", 0 },
		{ "Slurm", "SLURM_PROCID", "SLURM_NTASKS", 0 },
		{ "torchrun", "RANK", "WORLD_SIZE", 1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(styles) / sizeof(styles[0]); i++) {
		int codes[3];

		port = t_free_port(AF_INET);
		T_CHECK(port > 0, "port");
		T_CHECK(!t_fork_ranks(3, rank_main, (void *)&styles[i], codes, 60),
			"%s: ranks failed %d %d %d", styles[i].name, codes[0], codes[1], codes[2]);
		printf("%s environment: 3 ranks initialised\n", styles[i].name);
	}
	if (test_errors())
		return T_FAIL;
	return T_PASS;
}
