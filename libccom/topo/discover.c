// SPDX-License-Identifier: MIT
/*
 * discover.c - what this host looks like from the calling rank: online CPUs
 * and the rank's affinity (sched_getaffinity), NUMA nodes
 * (/sys/devices/system/node), network interfaces (/sys/class/net for
 * state, speed, MTU and NUMA node; getifaddrs for addresses) and the nccom
 * device (/dev/nccom, GET_INFO).  Everything here is best effort: a missing
 * sysfs file leaves a field at its "unknown" value, it never fails init.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#if __has_include(<linux/nccom.h>)
#include <linux/nccom.h>
#define CCOM_TOPO_HAVE_UAPI 1
#else
#define CCOM_TOPO_HAVE_UAPI 0
#endif

#include "topo/topo.h"

#define CPU_BITS CPU_SETSIZE
#define CPU_WORDS (CPU_BITS / 64)
#define NCCOM_DEV_PATH "/dev/nccom"
#define NCCOM_MAX_DEVS 64

/* Read the first line of a small sysfs file into @buf (newline stripped). */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int read_int(const char *path, int *val)
{
	char buf[64], *end;
	long v;

	if (read_line(path, buf, sizeof(buf)))
		return -ENOENT;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*val = (int)v;
	return 0;
}

int ccom_topo_parse_cpulist(const char *s, uint64_t *bits, int nbits)
{
	int count = 0;

	memset(bits, 0, ((nbits + 63) / 64) * sizeof(uint64_t));
	while (*s && *s != '\n') {
		char *end;
		long lo, hi, c;

		lo = strtol(s, &end, 10);
		if (end == s || lo < 0 || lo >= nbits)
			return -EINVAL;
		hi = lo;
		s = end;
		if (*s == '-') {
			hi = strtol(s + 1, &end, 10);
			if (end == s + 1 || hi < lo || hi >= nbits)
				return -EINVAL;
			s = end;
		}
		for (c = lo; c <= hi; c++)
			if (!(bits[c / 64] & (1ULL << (c % 64)))) {
				bits[c / 64] |= 1ULL << (c % 64);
				count++;
			}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return count;
}

/* Print a bitmap as a cpulist ("0-3,8"). */
static void format_cpulist(const uint64_t *bits, int nbits, char *buf, size_t len)
{
	size_t off = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < nbits && off < len) {
		int lo;

		if (!(bits[c / 64] & (1ULL << (c % 64)))) {
			c++;
			continue;
		}
		lo = c;
		while (c + 1 < nbits && (bits[(c + 1) / 64] & (1ULL << ((c + 1) % 64))))
			c++;
		off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", lo);
		if (c > lo && off < len)
			off += snprintf(buf + off, len - off, "-%d", c);
		c++;
	}
}

static void discover_cpus(struct ccom_topo *topo, uint64_t *aff)
{
	cpu_set_t set;
	int c;

	topo->ncpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	memset(aff, 0, CPU_WORDS * sizeof(uint64_t));
	if (sched_getaffinity(0, sizeof(set), &set)) {
		CPU_ZERO(&set);
		for (c = 0; c < topo->ncpus_online && c < CPU_BITS; c++)
			CPU_SET(c, &set);
	}
	for (c = 0; c < CPU_BITS; c++)
		if (CPU_ISSET(c, &set))
			aff[c / 64] |= 1ULL << (c % 64);
	topo->naffinity = CPU_COUNT(&set);
	format_cpulist(aff, CPU_BITS, topo->affinity, sizeof(topo->affinity));
}

static uint64_t node_mem_kb(int id)
{
	char path[96], line[160];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", id);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MemTotal:");

		if (p && sscanf(p + 9, "%llu", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * NUMA nodes from sysfs; without /sys/devices/system/node (no NUMA support)
 * the host is one node holding every online CPU.  local_numa is the node
 * that holds all of the rank's allowed CPUs, or -1 when they span several.
 */
static int discover_numa(struct ccom_topo *topo, const uint64_t *aff)
{
	uint64_t online[CPU_WORDS], cpus[CPU_WORDS];
	char buf[CCOM_TOPO_CPULIST_LEN], path[96];
	int id, w, n;

	topo->local_numa = -1;
	n = -1;
	if (!read_line("/sys/devices/system/node/online", buf, sizeof(buf)))
		n = ccom_topo_parse_cpulist(buf, online, CPU_BITS);
	if (n <= 0) {
		topo->numa = calloc(1, sizeof(*topo->numa));
		if (!topo->numa)
			return -ENOMEM;
		topo->nnuma = 1;
		topo->numa[0].ncpus = topo->ncpus_online;
		snprintf(topo->numa[0].cpulist, sizeof(topo->numa[0].cpulist), "0-%d",
			 topo->ncpus_online - 1);
		topo->local_numa = 0;
		return 0;
	}
	topo->numa = calloc(n, sizeof(*topo->numa));
	if (!topo->numa)
		return -ENOMEM;
	for (id = 0; id < CPU_BITS && topo->nnuma < n; id++) {
		struct ccom_topo_numa *nd;
		bool covers = true, touches = false;

		if (!(online[id / 64] & (1ULL << (id % 64))))
			continue;
		nd = &topo->numa[topo->nnuma++];
		nd->id = id;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", id);
		if (!read_line(path, nd->cpulist, sizeof(nd->cpulist)) &&
		    (nd->ncpus = ccom_topo_parse_cpulist(nd->cpulist, cpus, CPU_BITS)) >= 0) {
			for (w = 0; w < CPU_WORDS; w++) {
				if (aff[w] & ~cpus[w])
					covers = false;
				if (aff[w] & cpus[w])
					touches = true;
			}
			if (covers && touches)
				topo->local_numa = id;
		} else {
			nd->ncpus = 0;
		}
		nd->mem_kb = node_mem_kb(id);
	}
	return 0;
}

/*
 * Speed, MTU and NUMA node from sysfs.  /sys/class/net shows the network
 * namespace sysfs was mounted in, which is not ours after setns() or
 * `unshare -n` without a remount: trust it only if its ifindex matches ours.
 */
static void nic_sysfs(struct ccom_topo_nic *nic)
{
	char path[128];
	int ifindex = -1;

	nic->speed_mbps = -1;
	nic->mtu = -1;
	nic->numa_node = -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", nic->name);
	if (read_int(path, &ifindex) || ifindex != (int)if_nametoindex(nic->name))
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", nic->name);
	if (read_int(path, &nic->speed_mbps) || nic->speed_mbps <= 0)
		nic->speed_mbps = -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", nic->name);
	if (read_int(path, &nic->mtu))
		nic->mtu = -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", nic->name);
	if (read_int(path, &nic->numa_node))
		nic->numa_node = -1;
}

static struct ccom_topo_nic *nic_find(struct ccom_topo *topo, const char *name)
{
	int i;

	for (i = 0; i < topo->nnics; i++)
		if (!strcmp(topo->nics[i].name, name))
			return &topo->nics[i];
	return NULL;
}

static void nic_add_addr(struct ccom_topo_nic *nic, const struct sockaddr *sa)
{
	char *dst;

	if (nic->naddrs >= CCOM_TOPO_NIC_ADDRS)
		return;
	dst = nic->addrs[nic->naddrs];
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, dst,
			  CCOM_TOPO_ADDR_LEN);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, dst,
			  CCOM_TOPO_ADDR_LEN);
	} else {
		return;
	}
	nic->naddrs++;
}

/* True if interface address @sa equals the bootstrap address @bs (v4-mapped aware). */
static bool addr_matches(const struct sockaddr *sa, const struct sockaddr_in6 *bs)
{
	const struct in6_addr *a6 = &bs->sin6_addr;

	if (bs->sin6_family == AF_INET && sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)bs)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
	if (bs->sin6_family != AF_INET6)
		return false;
	if (sa->sa_family == AF_INET6)
		return !memcmp(a6, &((const struct sockaddr_in6 *)sa)->sin6_addr, sizeof(*a6));
	if (sa->sa_family == AF_INET && IN6_IS_ADDR_V4MAPPED(a6))
		return !memcmp(&a6->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	return false;
}

/* The interface @ifa belongs to, added on first sight (NULL when the table is full). */
static struct ccom_topo_nic *nic_get(struct ccom_topo *topo, const struct ifaddrs *ifa)
{
	struct ccom_topo_nic *nic = nic_find(topo, ifa->ifa_name);

	if (nic || topo->nnics >= CCOM_TOPO_MAX_NICS || strlen(ifa->ifa_name) >= IF_NAMESIZE)
		return nic;
	nic = &topo->nics[topo->nnics++];
	strcpy(nic->name, ifa->ifa_name);
	nic->up = (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
	nic->loopback = ifa->ifa_flags & IFF_LOOPBACK;
	nic_sysfs(nic);
	return nic;
}

/*
 * Interfaces of this network namespace from getifaddrs (its AF_PACKET
 * entries list every interface, with or without addresses), plus sysfs.
 */
static int discover_nics(struct ccom_topo *topo, const struct sockaddr_in6 *bs)
{
	struct ifaddrs *ifa_list = NULL, *ifa;

	topo->bootstrap_nic = -1;
	topo->nics = calloc(CCOM_TOPO_MAX_NICS, sizeof(*topo->nics));
	if (!topo->nics)
		return -ENOMEM;
	if (getifaddrs(&ifa_list))
		return 0;
	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
		struct ccom_topo_nic *nic;

		if (!ifa->ifa_name)
			continue;
		nic = nic_get(topo, ifa);
		if (!nic || !ifa->ifa_addr)
			continue;
		nic_add_addr(nic, ifa->ifa_addr);
		if (bs && topo->bootstrap_nic < 0 && addr_matches(ifa->ifa_addr, bs))
			topo->bootstrap_nic = (int)(nic - topo->nics);
	}
	freeifaddrs(ifa_list);
	return 0;
}

#if CCOM_TOPO_HAVE_UAPI
static void nccom_query(struct ccom_topo_nccom *nc, int fd)
{
	struct nccom_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		snprintf(nc->status, sizeof(nc->status), "GET_INFO failed: %s",
			 strerror(errno));
		return;
	}
	nc->usable = true;
	nc->ndevs = (int)info.dev_count;
	nc->abi_version = info.out_abi_version;
	nc->features = info.out_features;
	snprintf(nc->status, sizeof(nc->status), "ok");
}
#else
static void nccom_query(struct ccom_topo_nccom *nc, int fd)
{
	(void)fd;
	snprintf(nc->status, sizeof(nc->status), "built without uapi/linux/nccom.h");
}
#endif

static void discover_nccom(struct ccom_topo_nccom *nc)
{
	struct stat st;
	int fd;

	if (stat(NCCOM_DEV_PATH, &st)) {
		snprintf(nc->status, sizeof(nc->status), "absent");
		return;
	}
	nc->present = true;
	fd = open(NCCOM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(nc->status, sizeof(nc->status), "open failed: %s", strerror(errno));
		return;
	}
	nccom_query(nc, fd);
	close(fd);
}

void ccom_topo_refresh_affinity(struct ccom_topo *topo)
{
	uint64_t aff[CPU_WORDS], cpus[CPU_WORDS];
	int i, w;

	discover_cpus(topo, aff);
	topo->local_numa = -1;
	for (i = 0; i < topo->nnuma; i++) {
		bool covers = true, touches = false;

		if (ccom_topo_parse_cpulist(topo->numa[i].cpulist, cpus, CPU_BITS) < 0)
			continue;
		for (w = 0; w < CPU_WORDS; w++) {
			covers &= !(aff[w] & ~cpus[w]);
			touches |= (aff[w] & cpus[w]) != 0;
		}
		if (covers && touches)
			topo->local_numa = topo->numa[i].id;
	}
}

int ccom_topo_discover_local(struct ccom_topo *topo, const struct sockaddr_in6 *bootstrap_addr)
{
	uint64_t aff[CPU_WORDS];
	int err;

	if (gethostname(topo->hostname, sizeof(topo->hostname) - 1))
		snprintf(topo->hostname, sizeof(topo->hostname), "unknown");
	discover_cpus(topo, aff);
	err = discover_numa(topo, aff);
	if (err)
		return err;
	err = discover_nics(topo, bootstrap_addr);
	if (err)
		return err;
	discover_nccom(&topo->nccom);
	return 0;
}
