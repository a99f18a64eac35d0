// SPDX-License-Identifier: MIT
/*
 * net_ib_verbs.c - net_ib's access to libibverbs, its choice of the RDMA
 * device, port and GID, and the probe the network choice of select.c
 * calls (net_ib.h).
 *
 * libibverbs is loaded with dlopen() when a communicator first needs it
 * (CCOM_IB_LIB, default libibverbs.so.1), so libccom builds with gcc and
 * make alone and runs where rdma-core is absent; the layouts it uses are
 * declared in net_ib_abi.h, and the entry points resolved here are the
 * table ccom_ibv (net_ib_private.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "transport/net_ib.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "util/params.h"

#define IB_MAX_PORTS 8

/* ---------------------------------------------------------------- the library */

struct ib_lib ccom_ibv;
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

int ccom_ib_lib_load(char *why, size_t len)
{
	const char *name = ccom_param_str("CCOM_IB_LIB");
	struct ib_lib l = { 0 };
	void *h;
	int err = 0;

	if (!name || !*name)
		name = "libibverbs.so.1";
	pthread_mutex_lock(&lib_lock);
	if (ccom_ibv.h && !strcmp(ccom_ibv.name, name))
		goto out;
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, len, "%s not found (%s); install the verbs library and a provider (Debian: apt-get install ibverbs-providers), point CCOM_IB_LIB at it, or set CCOM_NET=socket",
			 name, e ? e : "dlopen failed");
		err = -ENOENT;
		goto out;
	}
	l.h = h;
	snprintf(l.name, sizeof(l.name), "%s", name);
#define IB_SYM(field, sym)						\
	do {								\
		*(void **)&l.field = dlsym(h, sym);			\
		if (!l.field) {						\
			snprintf(why, len, "%s lacks %s; it is not libibverbs 1.1 (rdma-core): install rdma-core's libibverbs1 or set CCOM_NET=socket", \
				 name, sym);				\
			err = -ENOSYS;					\
			goto out;					\
		}							\
	} while (0)
	IB_SYM(get_device_list, "ibv_get_device_list");
	IB_SYM(free_device_list, "ibv_free_device_list");
	IB_SYM(get_device_name, "ibv_get_device_name");
	IB_SYM(open_device, "ibv_open_device");
	IB_SYM(close_device, "ibv_close_device");
	IB_SYM(query_port, "ibv_query_port");
	IB_SYM(query_gid, "ibv_query_gid");
	IB_SYM(alloc_pd, "ibv_alloc_pd");
	IB_SYM(dealloc_pd, "ibv_dealloc_pd");
	IB_SYM(reg_mr, "ibv_reg_mr");
	IB_SYM(dereg_mr, "ibv_dereg_mr");
	IB_SYM(create_comp_channel, "ibv_create_comp_channel");
	IB_SYM(destroy_comp_channel, "ibv_destroy_comp_channel");
	IB_SYM(create_cq, "ibv_create_cq");
	IB_SYM(destroy_cq, "ibv_destroy_cq");
	IB_SYM(get_cq_event, "ibv_get_cq_event");
	IB_SYM(ack_cq_events, "ibv_ack_cq_events");
	IB_SYM(create_qp, "ibv_create_qp");
	IB_SYM(modify_qp, "ibv_modify_qp");
	IB_SYM(destroy_qp, "ibv_destroy_qp");
	IB_SYM(wc_status_str, "ibv_wc_status_str");
#undef IB_SYM
	*(void **)&l.reg_dmabuf_mr = dlsym(h, "ibv_reg_dmabuf_mr");
	ccom_ibv = l;	/* a previous handle stays loaded: its functions may still be in use */
out:
	pthread_mutex_unlock(&lib_lock);
	return err;
}

/* ---------------------------------------------------------------- device, port, GID */

/*
 * Does device @dev port @port match CCOM_IB_HCA @spec?  The grammar of
 * CCOM_SOCKET_IFNAME: comma-separated name prefixes, each optionally
 * ":port"; a leading ^ excludes them, a leading = requires exact names.
 */
static bool hca_match(const char *spec, const char *dev, int port)
{
	bool excl = false, exact = false, hit = false;

	if (!spec || !*spec)
		return true;
	if (*spec == '^') {
		excl = true;
		spec++;
	}
	if (*spec == '=') {
		exact = true;
		spec++;
	}
	while (*spec) {
		size_t n = strcspn(spec, ",");
		char item[96], *colon;
		int want = 0;

		snprintf(item, sizeof(item), "%.*s", (int)n, spec);
		colon = strchr(item, ':');
		if (colon) {
			*colon = '\0';
			want = atoi(colon + 1);
		}
		if (*item && (exact ? !strcmp(item, dev) : !strncmp(item, dev, strlen(item))) &&
		    (!want || want == port))
			hit = true;
		spec += n;
		if (*spec == ',')
			spec++;
	}
	return excl ? !hit : hit;
}

/* Ports of @dev from sysfs (1-based, contiguous); 1 if unknown. */
static int port_count(const char *dev)
{
	char path[192];
	int n;

	for (n = 1; n <= IB_MAX_PORTS; n++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d", dev, n);
		if (access(path, F_OK))
			break;
	}
	return n > 1 ? n - 1 : 1;
}

static const char *port_state_str(int s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return s >= 0 && s < 6 ? names[s] : "?";
}

static int open_port_matching(struct ib_port *p, const char *want_dev, int want_port, char *why,
			      size_t len);

/* See net_ib_private.h; @want_dev "" or NULL: the first ACTIVE port CCOM_IB_HCA allows. */
int ccom_ib_open_port(struct ib_port *p, const char *want_dev, int want_port, char *why,
		      size_t len)
{
	if (want_dev && want_dev[0] && !open_port_matching(p, want_dev, want_port, why, len))
		return 0;
	return open_port_matching(p, NULL, 0, why, len);
}

static int open_port_matching(struct ib_port *p, const char *want_dev, int want_port, char *why,
			      size_t len)
{
	const char *spec = ccom_param_str("CCOM_IB_HCA");
	struct ccib_device **list;
	char seen[256];
	size_t off = 0;
	int ndev = 0, i, port, nmatch = 0;

	memset(p, 0, sizeof(*p));
	seen[0] = '\0';
	list = ccom_ibv.get_device_list(&ndev);
	if (!list || ndev <= 0) {
		snprintf(why, len, "no RDMA device found (%s%s); load a driver (soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0) or set CCOM_NET=socket",
			 list ? "libibverbs lists none" : "ibv_get_device_list: ",
			 list ? "" : strerror(errno));
		if (list)
			ccom_ibv.free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < ndev; i++) {
		const char *name = ccom_ibv.get_device_name(list[i]);
		struct ccib_context *ctx = NULL;
		int np = port_count(name);

		for (port = 1; port <= np; port++) {
			struct ccib_port_attr a;

			if (!hca_match(spec, name, port) ||
			    (want_dev && (strcmp(name, want_dev) || port != want_port)))
				continue;
			nmatch++;
			if (!ctx)
				ctx = ccom_ibv.open_device(list[i]);
			memset(&a, 0, sizeof(a));
			if (!ctx || ccom_ibv.query_port(ctx, (uint8_t)port, &a)) {
				if (off < sizeof(seen) - 1)
					off += snprintf(seen + off, sizeof(seen) - off, "%s%s:%d(%s)",
							off ? ", " : "", name, port,
							ctx ? "query failed" : "cannot open");
				continue;
			}
			if (a.state == CCIB_PORT_ACTIVE) {
				p->ctx = ctx;
				snprintf(p->dev, sizeof(p->dev), "%s", name);
				p->port = port;
				p->attr = a;
				ccom_ibv.free_device_list(list);
				return 0;
			}
			if (off < sizeof(seen) - 1)
				off += snprintf(seen + off, sizeof(seen) - off, "%s%s:%d(%s)",
						off ? ", " : "", name, port, port_state_str(a.state));
		}
		if (ctx)
			ccom_ibv.close_device(ctx);
		if (!nmatch && off < sizeof(seen) - 1)
			off += snprintf(seen + off, sizeof(seen) - off, "%s%s", off ? ", " : "", name);
	}
	ccom_ibv.free_device_list(list);
	if (!nmatch)
		snprintf(why, len, "no RDMA device matches CCOM_IB_HCA=%s (devices: %s); fix CCOM_IB_HCA or set CCOM_NET=socket",
			 spec, seen);
	else
		snprintf(why, len, "no ACTIVE port on the RDMA device(s) %s; check the link (ibv_devinfo, rdma link) or set CCOM_NET=socket",
			 seen);
	return -ENODEV;
}

/* "RoCE v2", "IB/RoCE v1" or "" for GID @idx of the port (sysfs). */
static void gid_type(const struct ib_port *p, int idx, char *buf, size_t len)
{
	char path[224];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", p->dev,
		 p->port, idx);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static bool gid_zero(const union ccib_gid *g)
{
	static const uint8_t z[16];

	return !memcmp(g->raw, z, 16);
}

static bool gid_v4mapped(const union ccib_gid *g)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pre, 12);
}

/*
 * The GID: CCOM_IB_GID_INDEX if set; InfiniBand: index 0; Ethernet (RoCE):
 * the first RoCE v2 GID, an IPv4-mapped one first, else the first v1 one.
 */
int ccom_ib_pick_gid(struct ib_port *p, char *why, size_t len)
{
	int64_t forced = ccom_param_int("CCOM_IB_GID_INDEX");
	int i, best = -1, best_score = 0;
	char type[32];

	if (forced >= 0) {
		if (forced >= p->attr.gid_tbl_len ||
		    ccom_ibv.query_gid(p->ctx, (uint8_t)p->port, (int)forced, &p->gid)) {
			snprintf(why, len, "CCOM_IB_GID_INDEX=%lld is not a GID of %s port %d (table of %d); pick one from `ibv_devinfo -v` or unset it",
				 (long long)forced, p->dev, p->port, p->attr.gid_tbl_len);
			return -EINVAL;
		}
		p->gid_index = (int)forced;
		p->gid_kind = "forced";
		return 0;
	}
	if (p->attr.link_layer != CCIB_LINK_LAYER_ETHERNET) {
		p->gid_index = 0;
		p->gid_kind = "IB";
		if (ccom_ibv.query_gid(p->ctx, (uint8_t)p->port, 0, &p->gid))
			memset(&p->gid, 0, sizeof(p->gid));
		return 0;
	}
	for (i = 0; i < p->attr.gid_tbl_len && i < 256; i++) {
		union ccib_gid g;
		int score;

		if (ccom_ibv.query_gid(p->ctx, (uint8_t)p->port, i, &g) || gid_zero(&g))
			continue;
		gid_type(p, i, type, sizeof(type));
		score = strstr(type, "v2") ? 2 : 1;
		if (gid_v4mapped(&g))
			score += 2;
		if (score > best_score) {
			best = i;
			best_score = score;
			p->gid = g;
		}
	}
	if (best < 0) {
		snprintf(why, len, "no usable GID on %s port %d (the network interface under it has no IP address?); give it an address or set CCOM_IB_GID_INDEX",
			 p->dev, p->port);
		return -ENODEV;
	}
	p->gid_index = best;
	p->gid_kind = best_score >= 3 ? "RoCE v2 IPv4" : best_score == 2 ? "RoCE v2" :
		      "RoCE v1";
	return 0;
}

int ccom_net_ib_probe(char *why, size_t why_len)
{
	struct ib_port p;

	if (ccom_ib_lib_load(why, why_len) || ccom_ib_open_port(&p, NULL, 0, why, why_len))
		return 0;
	ccom_ibv.close_device(p.ctx);
	return 1;
}

/* ---------------------------------------------------------------- the topology's view */

static const char *link_layer_str(int ll)
{
	return ll == CCIB_LINK_LAYER_ETHERNET ? "Ethernet" :
	       ll == CCIB_LINK_LAYER_INFINIBAND || ll == 0 ? "InfiniBand" : "?";
}

/* NUMA node of RDMA device @name (sysfs), -1 when it has none (soft-RoCE) or it cannot be read. */
static int dev_numa_node(const char *name)
{
	char path[192];
	int node = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

int ccom_net_ib_list_ports(struct ccom_net_ib_port_info *out, int max, char *why, size_t len)
{
	const char *spec = ccom_param_str("CCOM_IB_HCA");
	struct ccib_device **list;
	int ndev = 0, i, port, n = 0;
	bool chosen = false;

	if (ccom_ib_lib_load(why, len))
		return 0;
	list = ccom_ibv.get_device_list(&ndev);
	if (!list || ndev <= 0) {
		snprintf(why, len, "no RDMA device found");
		if (list)
			ccom_ibv.free_device_list(list);
		return 0;
	}
	for (i = 0; i < ndev && n < max; i++) {
		const char *name = ccom_ibv.get_device_name(list[i]);
		struct ccib_context *ctx = ccom_ibv.open_device(list[i]);
		int np = port_count(name);

		for (port = 1; ctx && port <= np && n < max; port++) {
			struct ccom_net_ib_port_info *o = &out[n];
			struct ib_port p;
			char w[256];

			memset(o, 0, sizeof(*o));
			memset(&p, 0, sizeof(p));
			snprintf(o->dev, sizeof(o->dev), "%s", name);
			o->port = port;
			o->gid_index = -1;
			o->hca_match = hca_match(spec, name, port);
			o->numa_node = dev_numa_node(name);
			if (ccom_ibv.query_port(ctx, (uint8_t)port, &p.attr)) {
				snprintf(o->state, sizeof(o->state), "query failed");
				n++;
				continue;
			}
			snprintf(o->state, sizeof(o->state), "%s", port_state_str(p.attr.state));
			snprintf(o->link_layer, sizeof(o->link_layer), "%s",
				 link_layer_str(p.attr.link_layer));
			o->mtu = 128 << p.attr.active_mtu;
			p.ctx = ctx;
			snprintf(p.dev, sizeof(p.dev), "%s", name);
			p.port = port;
			if (p.attr.state == CCIB_PORT_ACTIVE && !ccom_ib_pick_gid(&p, w, sizeof(w))) {
				o->gid_index = p.gid_index;
				snprintf(o->gid_kind, sizeof(o->gid_kind), "%s", p.gid_kind);
				inet_ntop(AF_INET6, p.gid.raw, o->gid, sizeof(o->gid));
			}
			if (!chosen && o->hca_match && p.attr.state == CCIB_PORT_ACTIVE) {
				o->selected = 1;
				chosen = true;
			}
			n++;
		}
		if (ctx)
			ccom_ibv.close_device(ctx);
	}
	ccom_ibv.free_device_list(list);
	return n;
}
