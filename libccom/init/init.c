// SPDX-License-Identifier: MIT
/*
 * init.c - the communicator init state machine: validate -> bootstrap ->
 * peer-info all-gather -> node / local / intra-process ranks -> topology
 * (device binding, duplicate devices) -> cross-rank alignment -> connect
 * (data path) -> barrier -> ready.  One INFO line per milestone so that the
 * last line of a stuck rank names its stage, and an "Init timings" line in
 * microseconds.  The comm's async_result is ccomInProgress until every
 * stage is done, then ccomSuccess, or the error of the failing stage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "bootstrap/bootstrap.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "init/init.h"
#include "proxy/proxy.h"
#include "publish/publish.h"
#include "topo/topo.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define CCOM_DEVICE_DEFAULT (-2)	/* peer info: "local rank modulo device count" */

static const char *const stage_names[CCOM_INIT_NSTAGES] = {
	"validate", "bootstrap", "peerinfo", "ranks", "topo",
	"align", "connect", "barrier", "ready",
};

const char *ccom_init_stage_name(int stage)
{
	return stage >= 0 && stage < CCOM_INIT_NSTAGES ? stage_names[stage] : "?";
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_setup(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		ccom_warn("Call to getrlimit failed : %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			ccom_warn("Call to setrlimit failed : %s (open-file limit stays %llu)",
				  strerror(errno), (unsigned long long)old);
		else
			ccom_info(CCOM_SUBSYS_INIT, "Raised RLIMIT_NOFILE from %llu to %llu",
				  (unsigned long long)old, (unsigned long long)rl.rlim_max);
	}
}

void ccom_global_init(void)
{
	pthread_once(&global_once, global_setup);
}

int ccom_device_count(void)
{
	struct nccom_info info;
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	int n = 0;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (!ioctl(fd, NCCOM_IOC_GET_INFO, &info))
		n = (int)info.dev_count;
	else
		ccom_warn("/dev/nccom is present but NCCOM_IOC_GET_INFO failed: %s; not using devices",
			  strerror(errno));
	close(fd);
	return n;
}

/* ------------------------------------------------------------------ */
/* Stages                                                              */

static uint64_t host_hash(void)
{
	char ident[512];

	ccom_host_identity(ccom_param_str("CCOM_HOSTID"), ident, sizeof(ident));
	return ccom_hash_bytes(0, ident, strlen(ident));
}

/* The physical machine: simulated hosts (CCOM_HOSTID) on it share its CPUs. */
static uint32_t machine_id(void)
{
	char ident[512];

	ccom_host_identity(NULL, ident, sizeof(ident));
	return (uint32_t)ccom_hash_bytes(0, ident, strlen(ident));
}

static uint64_t pid_hash(void)
{
	char ns[64] = "";
	ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
	pid_t pid = getpid();

	if (n < 0)
		n = 0;
	ns[n] = '\0';
	return ccom_hash_bytes(ccom_hash_bytes(0, ns, strlen(ns)), &pid, sizeof(pid));
}

/* Settings that change the data path and must therefore agree on every rank. */
static const char *const aligned_params[] = {
	"CCOM_ALGO", "CCOM_PROTO", "CCOM_TRANSPORT", "CCOM_NSOCKS", "CCOM_SHM_CHUNK",
	"CCOM_NET_CHUNK",
};

static uint64_t config_digest(void)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < CCOM_ARRAY_SIZE(aligned_params); i++) {
		const char *v = ccom_param_str(aligned_params[i]);

		h = ccom_hash_bytes(h, aligned_params[i], strlen(aligned_params[i]));
		h = ccom_hash_bytes(h, v ? v : "", v ? strlen(v) + 1 : 1);
	}
	return h;
}

static int stage_bootstrap(struct ccomComm *comm)
{
	struct ccom_bootstrap_args a = {
		.id = &comm->id,
		.ids = comm->ids,
		.nids = comm->nids,
		.rank = comm->rank,
		.nranks = comm->nranks,
		.start_us = comm->init_start_us,
		.timeout_ms = (int64_t)comm->config.timeoutSec * 1000,
		.abort = &comm->abort_flag,
	};

	if (comm->init_prepare) {
		int rc = comm->init_prepare(comm);

		comm->init_prepare = NULL;
		if (rc)
			return rc;
	}
	return ccom_bootstrap_init(&a, &comm->bootstrap);
}

static int stage_peerinfo(struct ccomComm *comm)
{
	struct ccom_peer_info *me;
	struct stat st;
	const void *la;
	size_t lalen;
	int r;

	comm->peers = calloc(comm->nranks, sizeof(*comm->peers));
	if (!comm->peers) {
		ccom_set_last_error("Init: out of memory for %d peer records", comm->nranks);
		return -ENOMEM;
	}
	me = &comm->peers[comm->rank];
	me->rank = comm->rank;
	me->device = comm->device;
	me->host_hash = host_hash() + comm->comm_hash;
	me->pid_hash = pid_hash() + comm->comm_hash;
	me->pid = getpid();
	me->version = ccom_version_code();
	me->build_hash = ccom_build_hash();
	me->shm_dev = stat("/dev/shm", &st) ? 0 : (uint64_t)st.st_dev;
	me->config_digest = config_digest();
	gethostname(me->host, sizeof(me->host) - 1);
	me->ndevices = ccom_device_count();
	me->ncpus = (int32_t)sysconf(_SC_NPROCESSORS_ONLN);
	me->machine_id = machine_id();
	la = ccom_bootstrap_listen_addr(comm->bootstrap, &lalen);
	memcpy(&me->listen_addr, la, lalen < sizeof(me->listen_addr) ? lalen :
					sizeof(me->listen_addr));
	r = ccom_bootstrap_allgather(comm->bootstrap, comm->peers, sizeof(*comm->peers));
	if (r)
		return r;
	for (r = 0; r < comm->nranks; r++) {
		const struct ccom_peer_info *p = &comm->peers[r];

		if (p->rank != r) {
			/* The peer's bytes, not ours: ccomRemoteError. */
			ccom_set_last_error("Init: the peer record of rank %d claims rank %d (want %d): that rank's libccom is corrupt or not of this build; run the same build on every rank",
					    r, p->rank, r);
			return -EBADMSG;
		}
		if (p->version != me->version || p->build_hash != me->build_hash) {
			ccom_set_last_error("Init: version skew: rank %d (%s pid %d) runs libccom version %u build %016llx but rank %d runs version %u build %016llx; use the same libccom build on every rank",
					    r, p->host, p->pid, p->version,
					    (unsigned long long)p->build_hash, comm->rank, me->version,
					    (unsigned long long)me->build_hash);
			return -EBADE;
		}
	}
	return 0;
}

static int stage_ranks(struct ccomComm *comm)
{
	const struct ccom_peer_info *me = &comm->peers[comm->rank];
	uint64_t *nodes;
	int r, n, l;

	comm->rank_to_node = calloc(comm->nranks, sizeof(int));
	comm->rank_to_local = calloc(comm->nranks, sizeof(int));
	nodes = calloc(comm->nranks, sizeof(*nodes));
	if (!comm->rank_to_node || !comm->rank_to_local || !nodes) {
		free(nodes);
		ccom_set_last_error("Init: out of memory for the rank maps of %d ranks", comm->nranks);
		return -ENOMEM;
	}
	/* Nodes are numbered by first appearance; ranks need not be contiguous per node. */
	comm->nnodes = 0;
	for (r = 0; r < comm->nranks; r++) {
		for (n = 0; n < comm->nnodes && nodes[n] != comm->peers[r].host_hash; n++)
			;
		if (n == comm->nnodes)
			nodes[comm->nnodes++] = comm->peers[r].host_hash;
		comm->rank_to_node[r] = n;
	}
	free(nodes);
	comm->node = comm->rank_to_node[comm->rank];
	comm->local_nranks = 0;
	comm->intra_proc_nranks = 0;
	for (r = 0; r < comm->nranks; r++) {
		int node = comm->rank_to_node[r];

		for (l = 0, n = 0; n < r; n++)
			l += comm->rank_to_node[n] == node;
		comm->rank_to_local[r] = l;
		if (node == comm->node)
			comm->local_nranks++;
		if (comm->peers[r].host_hash == me->host_hash && comm->peers[r].pid_hash == me->pid_hash) {
			if (r == comm->rank)
				comm->intra_proc_rank = comm->intra_proc_nranks;
			comm->intra_proc_nranks++;
		}
	}
	comm->local_rank = comm->rank_to_local[comm->rank];
	comm->local_to_rank = calloc(comm->local_nranks, sizeof(int));
	if (!comm->local_to_rank) {
		ccom_set_last_error("Init: out of memory");
		return -ENOMEM;
	}
	for (r = 0; r < comm->nranks; r++)
		if (comm->rank_to_node[r] == comm->node)
			comm->local_to_rank[comm->rank_to_local[r]] = r;
	ccom_info(CCOM_SUBSYS_INIT,
		  "Init PEERINFO rank %d: %d node(s), node %d, local rank %d/%d, intra-process rank %d/%d",
		  comm->rank, comm->nnodes, comm->node, comm->local_rank, comm->local_nranks,
		  comm->intra_proc_rank, comm->intra_proc_nranks);
	return 0;
}

/*
 * Resolve each rank's device and refuse two ranks of one host bound to the
 * same device.  Only explicit bindings (config.device, CCOM_DEVICE, a
 * devlist) are checked: the default, local rank modulo the device count,
 * shares devices by design when a host has more ranks than devices.
 */
static int stage_topo(struct ccomComm *comm)
{
	int multi = ccom_param_int("CCOM_MULTI_RANK_DEVICE") == 1;
	unsigned char *explicit = calloc(comm->nranks, 1);
	int r, s, err = 0;

	if (!explicit) {
		ccom_set_last_error("Init: out of memory");
		return -ENOMEM;
	}
	for (r = 0; r < comm->nranks; r++) {
		struct ccom_peer_info *p = &comm->peers[r];

		explicit[r] = p->device != CCOM_DEVICE_DEFAULT;
		if (!explicit[r])
			p->device = p->ndevices > 0 ? comm->rank_to_local[r] % p->ndevices : -1;
	}
	comm->device = comm->peers[comm->rank].device;
	for (r = 0; r < comm->nranks && !multi && !err; r++) {
		for (s = r + 1; s < comm->nranks; s++) {
			const struct ccom_peer_info *a = &comm->peers[r], *b = &comm->peers[s];

			if (!explicit[r] || !explicit[s] || a->device < 0 ||
			    a->device != b->device || a->host_hash != b->host_hash)
				continue;
			ccom_set_last_error("Init: duplicate device detected: rank %d and rank %d (host %s) are both bound to nccom device %d; give each rank of a host its own device (config.device, CCOM_DEVICE) or set CCOM_MULTI_RANK_DEVICE=1 to share it",
					    r, s, a->host, a->device);
			err = -EBADE;
			break;
		}
	}
	free(explicit);
	if (err)
		return err;
	err = ccom_topo_init(comm);
	if (err)
		return err;
	ccom_info(CCOM_SUBSYS_INIT | CCOM_SUBSYS_TOPO, "Init TOPO rank %d: device %d (%d on this host)",
		  comm->rank, comm->device, comm->peers[comm->rank].ndevices);
	return 0;
}

static int stage_align(struct ccomComm *comm)
{
	const struct ccom_peer_info *me = &comm->peers[comm->rank];
	char mine[512];
	size_t i, o = 0;
	int r;

	for (r = 0; r < comm->nranks; r++) {
		if (comm->peers[r].config_digest == me->config_digest)
			continue;
		for (i = 0; i < CCOM_ARRAY_SIZE(aligned_params); i++) {
			const char *v = ccom_param_str(aligned_params[i]);

			o += snprintf(mine + o, sizeof(mine) - o, "%s%s=%s", i ? " " : "",
				      aligned_params[i], v ? v : "(unset)");
			if (o >= sizeof(mine))
				break;
		}
		ccom_set_last_error("Init: rank %d (%s pid %d) and rank %d have different data-path settings (here: %s); set them identically on every rank",
				    r, comm->peers[r].host, comm->peers[r].pid, comm->rank, mine);
		return -EBADE;
	}
	return 0;
}

static int run_stage(struct ccomComm *comm, int stage)
{
	switch (stage) {
	case CCOM_STAGE_BOOTSTRAP:
		return stage_bootstrap(comm);
	case CCOM_STAGE_PEERINFO:
		return stage_peerinfo(comm);
	case CCOM_STAGE_RANKS:
		return stage_ranks(comm);
	case CCOM_STAGE_TOPO:
		return stage_topo(comm);
	case CCOM_STAGE_ALIGN:
		return stage_align(comm);
	case CCOM_STAGE_CONNECT:
		return ccom_coll_comm_init(comm);
	case CCOM_STAGE_BARRIER:
		return ccom_bootstrap_barrier(comm->bootstrap);
	default:
		return 0;
	}
}

static void log_timings(struct ccomComm *comm, int64_t total)
{
	const int64_t *t = comm->timings_us;

	ccom_info(CCOM_SUBSYS_INIT,
		  "Init timings: rank %d nranks %d total %lld us (validate %lld, bootstrap %lld, peerinfo %lld, ranks %lld, topo %lld, align %lld, connect %lld, barrier %lld)",
		  comm->rank, comm->nranks, (long long)total, (long long)t[CCOM_STAGE_VALIDATE],
		  (long long)t[CCOM_STAGE_BOOTSTRAP], (long long)t[CCOM_STAGE_PEERINFO],
		  (long long)t[CCOM_STAGE_RANKS], (long long)t[CCOM_STAGE_TOPO],
		  (long long)t[CCOM_STAGE_ALIGN], (long long)t[CCOM_STAGE_CONNECT],
		  (long long)t[CCOM_STAGE_BARRIER]);
}

/* Run every stage after validation; returns the ccomResult_t and sets async_result. */
static ccomResult_t comm_init_run(struct ccomComm *comm)
{
	ccomResult_t res;
	int stage, rc = 0;
	int64_t t;

	ccom_log_set_rank(comm->rank);
	for (stage = CCOM_STAGE_BOOTSTRAP; stage < CCOM_STAGE_READY; stage++) {
		t = ccom_now_us();
		if (ccom_comm_aborted(comm)) {
			ccom_set_last_error("Init: rank %d aborted by ccomCommAbort() before stage %s",
					    comm->rank, ccom_init_stage_name(stage));
			rc = -ECANCELED;
		} else {
			ccom_publish_init_stage(comm->publish, stage);
			rc = run_stage(comm, stage);
			if (rc == -ECANCELED && ccom_comm_aborted(comm))
				ccom_set_last_error("Init: rank %d aborted by ccomCommAbort() during stage %s",
						    comm->rank, ccom_init_stage_name(stage));
		}
		comm->timings_us[stage] = ccom_now_us() - t;
		if (rc)
			break;
		if (stage == CCOM_STAGE_BOOTSTRAP)
			ccom_info(CCOM_SUBSYS_INIT, "Init START comm %p rank %d nranks %d commHash %016llx",
				  (void *)comm, comm->rank, comm->nranks,
				  (unsigned long long)comm->comm_hash);
		else if (stage == CCOM_STAGE_CONNECT)
			ccom_info(CCOM_SUBSYS_INIT, "Init CONNECTED rank %d (data path ready)",
				  comm->rank);
	}
	t = ccom_now_us() - comm->init_start_us;
	if (rc) {
		res = ccom_result_from_errno(rc);
		snprintf(comm->last_error, sizeof(comm->last_error), "%s", ccom_last_error());
		ccom_warn("Init FAILED rank %d nranks %d at stage %s after %lld us: %s (%s)",
			  comm->rank, comm->nranks, ccom_init_stage_name(stage), (long long)t,
			  ccomGetErrorString(res), comm->last_error);
		ccom_comm_set_async_error(comm, res);
		ccom_publish_error(comm->publish, rc, comm->last_error, 1);
		return res;
	}
	comm->init_total_us = t;
	ccom_publish_init_stage(comm->publish, CCOM_STAGE_READY);
	atomic_store(&comm->async_result, ccomSuccess);
	ccom_info(CCOM_SUBSYS_INIT, "Init COMPLETE comm %p rank %d nranks %d device %d%s%s%s",
		  (void *)comm, comm->rank, comm->nranks, comm->device,
		  comm->name[0] ? " commName \"" : "", comm->name, comm->name[0] ? "\"" : "");
	log_timings(comm, t);
	return ccomSuccess;
}

static void comm_init_done(struct ccomComm *comm)
{
	pthread_mutex_lock(&comm->lock);
	comm->init_running = 0;
	pthread_cond_broadcast(&comm->cond);
	pthread_mutex_unlock(&comm->lock);
}

static void *comm_init_thread(void *arg)
{
	struct ccomComm *comm = arg;

	comm_init_run(comm);
	comm_init_done(comm);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */

static struct ccomComm *comm_alloc(const struct ccom_init_args *a)
{
	struct ccomComm *comm = calloc(1, sizeof(*comm));

	if (!comm)
		return NULL;
	comm->start_magic = CCOM_COMM_MAGIC;
	comm->end_magic = CCOM_COMM_MAGIC;
	comm->rank = a->rank;
	comm->nranks = a->nranks;
	comm->id = a->id;
	if (a->nids > 1) {
		comm->ids = malloc((size_t)a->nids * sizeof(*comm->ids));
		if (!comm->ids) {
			free(comm);
			return NULL;
		}
		memcpy(comm->ids, a->ids, (size_t)a->nids * sizeof(*comm->ids));
		comm->nids = a->nids;
	}
	comm->comm_hash = a->comm_hash ? a->comm_hash :
			  ccom_hash_mix(ccom_hash_bytes(0, a->id.internal, sizeof(a->id.internal)) +
					a->hash_salt);
	comm->init_prepare = a->prepare;
	comm->init_prepare_arg = a->prepare_arg;
	comm->magic = ccom_bootstrap_id_magic(&a->id);
	comm->config = a->config;
	/* The caller's string may go once the API call returns (validated: it fits). */
	if (a->config.commName)
		snprintf(comm->name, sizeof(comm->name), "%s", a->config.commName);
	comm->config.commName = comm->name[0] ? comm->name : NULL;
	comm->device = a->config.device == CCOM_CONFIG_UNDEF_INT ? CCOM_DEVICE_DEFAULT :
								   a->config.device;
	comm->node = -1;
	atomic_init(&comm->abort_flag, 0);
	atomic_init(&comm->async_result, ccomInProgress);
	pthread_mutex_init(&comm->lock, NULL);
	pthread_cond_init(&comm->cond, NULL);
	return comm;
}

ccomResult_t ccom_comm_init_rank(ccomComm_t *out, const struct ccom_init_args *a)
{
	struct ccomComm *comm;
	ccomResult_t res;
	int64_t t0 = a->start_us ? a->start_us : ccom_now_us();
	int rc;

	ccom_global_init();
	ccom_log_set_rank(a->rank);
	comm = comm_alloc(a);
	if (!comm) {
		ccom_set_last_error("Init: out of memory for the communicator");
		return ccomSystemError;
	}
	comm->init_start_us = t0;
	comm->init_running = 1;
	/* Best effort: NULL when publishing is off or failed (publish/). */
	comm->publish = ccom_publish_open(comm);
	ccom_publish_init_stage(comm->publish, CCOM_STAGE_VALIDATE);
	/* Published before any wait, so that another thread may ccomCommAbort() it. */
	__atomic_store_n(out, comm, __ATOMIC_RELEASE);
	ccom_info(CCOM_SUBSYS_INIT, "Init BEGIN rank %d nranks %d commHash %016llx%s%s%s timeout %d s %s",
		  a->rank, a->nranks, (unsigned long long)comm->comm_hash,
		  comm->name[0] ? " commName \"" : "", comm->name, comm->name[0] ? "\"" : "",
		  a->config.timeoutSec, a->config.blocking ? "blocking" : "nonblocking");
	comm->timings_us[CCOM_STAGE_VALIDATE] = ccom_now_us() - t0;
	if (a->config.blocking) {
		res = comm_init_run(comm);
		comm_init_done(comm);
		return res;
	}
	comm->init_thread_valid = 1;
	rc = pthread_create(&comm->init_thread, NULL, comm_init_thread, comm);
	if (rc) {
		comm->init_thread_valid = 0;
		ccom_set_last_error("Init: cannot start the init thread: %s", strerror(rc));
		snprintf(comm->last_error, sizeof(comm->last_error), "%s", ccom_last_error());
		ccom_comm_set_async_error(comm, ccomSystemError);
		comm_init_done(comm);
		return ccomSystemError;
	}
	return ccomInProgress;
}

static int check_rank_args(ccomComm_t *comm, int nranks, int rank)
{
	if (!comm) {
		ccom_set_last_error("Invalid argument: comm pointer is NULL");
		return -EINVAL;
	}
	*comm = NULL;
	if (nranks < 1 || rank < 0 || rank >= nranks) {
		ccom_set_last_error("Invalid rank requested : %d/%d (need nranks >= 1 and 0 <= rank < nranks)",
				    rank, nranks);
		return -EINVAL;
	}
	return 0;
}

ccomResult_t ccomCommInitRankConfig(ccomComm_t *comm, int nranks, ccomUniqueId commId, int rank,
				    ccomConfig_t *config)
{
	struct ccom_init_args a = { .nranks = nranks, .rank = rank, .id = commId,
				    .start_us = ccom_now_us() };
	uint64_t gh;
	int rc, base;

	ccom_clear_last_error();
	rc = check_rank_args(comm, nranks, rank);
	if (!rc && !ccom_bootstrap_id_grow_info(&commId, &base, &gh)) {
		ccom_set_last_error("Invalid argument: this unique id comes from ccomCommGetUniqueId and serves one ccomCommGrow; pass it to ccomCommGrow, or make an id for a new communicator with ccomGetUniqueId");
		rc = -EINVAL;
	}
	if (!rc)
		rc = ccom_config_validate(config, &a.config);
	if (rc)
		return ccom_result_from_errno(rc);
	return ccom_comm_init_rank(comm, &a);
}

ccomResult_t ccomCommInitRankScalable(ccomComm_t *comm, int nranks, int rank, int nIds,
				      ccomUniqueId *commIds, ccomConfig_t *config)
{
	struct ccom_init_args a = { .nranks = nranks, .rank = rank, .start_us = ccom_now_us() };
	int rc;

	ccom_clear_last_error();
	rc = check_rank_args(comm, nranks, rank);
	if (!rc && (!commIds || nIds < 1 || nIds > nranks)) {
		ccom_set_last_error("Invalid argument: nIds %d with %d ranks and ids %p (need 1 <= nIds <= nranks and an array of nIds ids)",
				    nIds, nranks, (void *)commIds);
		rc = -EINVAL;
	}
	if (!rc)
		rc = ccom_config_validate(config, &a.config);
	if (rc)
		return ccom_result_from_errno(rc);
	a.id = commIds[0];
	if (nIds > 1) {
		a.ids = commIds;
		a.nids = nIds;
	}
	return ccom_comm_init_rank(comm, &a);
}

ccomResult_t ccomCommInitRank(ccomComm_t *comm, int nranks, ccomUniqueId commId, int rank)
{
	return ccomCommInitRankConfig(comm, nranks, commId, rank, NULL);
}

ccomResult_t ccomGetUniqueId(ccomUniqueId *uniqueId)
{
	ccom_clear_last_error();
	if (!uniqueId) {
		ccom_set_last_error("Invalid argument: uniqueId is NULL");
		return ccomInvalidArgument;
	}
	ccom_global_init();
	return ccom_result_from_errno(ccom_bootstrap_get_unique_id(uniqueId));
}
