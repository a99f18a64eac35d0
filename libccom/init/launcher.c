// SPDX-License-Identifier: MIT
/*
 * launcher.c - building a communicator from a launcher's environment:
 * ccomCommInitFromEnv().  See launcher.h for the precedence of variables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "init/launcher.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

static const struct {
	const char *rank;
	const char *size;
	const char *name;
} launcher_vars[] = {
	{ "CCOM_RANK", "CCOM_NRANKS", "CCOM_RANK/CCOM_NRANKS" },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI" },
	{ "PMI_RANK", "PMI_SIZE", "PMI" },
	{ "SLURM_PROCID", "SLURM_NTASKS", "Slurm" },
	{ "RANK", "WORLD_SIZE", "RANK/WORLD_SIZE (torchrun)" },
};

static int parse_nonneg(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 0x7fffffff)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* getenv() of a launcher variable; CCOM_* ones go through the params table. */
static const char *env(const char *name)
{
	const char *v;

	if (!strncmp(name, "CCOM_", 5))
		return ccom_param_str(name);
	v = getenv(name);
	return v && v[0] ? v : NULL;
}

int ccom_launcher_rank(int *rank, int *nranks, const char **source)
{
	size_t i;

	for (i = 0; i < CCOM_ARRAY_SIZE(launcher_vars); i++) {
		const char *r = env(launcher_vars[i].rank), *n = env(launcher_vars[i].size);

		if (!r || !n)
			continue;
		if (parse_nonneg(r, rank) || parse_nonneg(n, nranks) || *nranks < 1 ||
		    *rank >= *nranks) {
			ccom_set_last_error("Invalid launcher environment: %s=%s %s=%s (need 0 <= rank < size)",
					    launcher_vars[i].rank, r, launcher_vars[i].size, n);
			return -EINVAL;
		}
		if (source)
			*source = launcher_vars[i].name;
		return 0;
	}
	return -ENOENT;
}

int ccom_launcher_addr(char *addr, size_t len, const char **source)
{
	const char *id = ccom_param_str("CCOM_COMM_ID");
	const char *ma = env("MASTER_ADDR"), *mp = env("MASTER_PORT");

	if (id) {
		snprintf(addr, len, "%s", id);
		if (source)
			*source = "CCOM_COMM_ID";
		return 0;
	}
	if (ma && mp) {
		/*
		 * MASTER_PORT is the launcher's own store (torchrun's, and
		 * torch.distributed's env://): rendezvous on the next port.
		 */
		char *end;
		long port = strtol(mp, &end, 10);

		if (*end || port < 1 || port > 65534) {
			ccom_set_last_error("ccomCommInitFromEnv: MASTER_PORT=%s is not a port number below 65535; set it (or CCOM_COMM_ID=<host>:<port>) identically on every rank",
					    mp);
			return -EINVAL;
		}
		if (strchr(ma, ':') && ma[0] != '[')
			snprintf(addr, len, "[%s]:%ld", ma, port + 1);
		else
			snprintf(addr, len, "%s:%ld", ma, port + 1);
		if (source)
			*source = "MASTER_ADDR:MASTER_PORT+1";
		return 0;
	}
	return -ENOENT;
}

ccomResult_t ccomCommInitFromEnv(ccomComm_t *comm, ccomConfig_t *config)
{
	const char *rsrc = NULL, *asrc = NULL;
	char addr[300];
	ccomUniqueId id;
	int rank, nranks, rc;

	ccom_clear_last_error();
	if (!comm) {
		ccom_set_last_error("ccomCommInitFromEnv: comm pointer is NULL");
		return ccomInvalidArgument;
	}
	*comm = NULL;
	rc = ccom_launcher_rank(&rank, &nranks, &rsrc);
	if (rc == -ENOENT) {
		ccom_set_last_error("ccomCommInitFromEnv: no launcher environment found; set CCOM_RANK and CCOM_NRANKS, or start the job with mpirun, srun or torchrun");
		return ccomInvalidArgument;
	}
	if (rc)
		return ccom_result_from_errno(rc);
	rc = ccom_launcher_addr(addr, sizeof(addr), &asrc);
	if (rc == -EINVAL)
		return ccomInvalidArgument;
	if (rc) {
		ccom_set_last_error("ccomCommInitFromEnv: no rendezvous address; set CCOM_COMM_ID=<host>:<port> (or MASTER_ADDR and MASTER_PORT) identically on every rank");
		return ccomInvalidArgument;
	}
	rc = ccom_bootstrap_id_from_addr(addr, asrc, &id);
	if (rc)
		return ccom_result_from_errno(rc);
	/* The key of an id from an address is public unless a job secret is mixed in (id.c). */
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommInitFromEnv: rank %d of %d from %s, rendezvous %s from %s, %s",
		  rank, nranks, rsrc, addr, asrc,
		  ccom_param_str("CCOM_COMM_SECRET") || ccom_param_str("CCOM_COMM_SECRET_FILE") ?
			  "authenticated by the job secret" :
			  "unauthenticated (no CCOM_COMM_SECRET)");
	return ccomCommInitRankConfig(comm, nranks, id, rank, config);
}
