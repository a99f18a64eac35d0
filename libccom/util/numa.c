// SPDX-License-Identifier: MIT
/*
 * numa.c - NUMA facts from sysfs and the preferred-node policy (util/);
 * see numa.h.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/numa.h"

#define NUMA_SYSFS "/sys/devices/system/node"
#define NUMA_MAX_NODES 1024

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -ENOENT;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* "0-3,8" into @set (CPU numbers beyond CPU_SETSIZE ignored); -EINVAL on a syntax error. */
static int parse_list(const char *s, cpu_set_t *set)
{
	char *end;
	long a, b;

	CPU_ZERO(set);
	while (*s) {
		a = strtol(s, &end, 10);
		if (end == s || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -EINVAL;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET((int)a, set);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return 0;
}

int ccom_numa_count(void)
{
	char buf[256];
	cpu_set_t set;
	int n;

	if (read_text(NUMA_SYSFS "/online", buf, sizeof(buf)) || parse_list(buf, &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

int ccom_numa_node_cpus(int node, cpu_set_t *set)
{
	char path[96], buf[4096];

	snprintf(path, sizeof(path), NUMA_SYSFS "/node%d/cpulist", node);
	if (node < 0 || read_text(path, buf, sizeof(buf)))
		return -ENOENT;
	return parse_list(buf, set);
}

int ccom_numa_node_of_cpus(const cpu_set_t *set)
{
	cpu_set_t node, both;
	int id, seen = 0;

	if (!CPU_COUNT(set))
		return -1;
	for (id = 0; id < NUMA_MAX_NODES && seen < ccom_numa_count(); id++) {
		if (ccom_numa_node_cpus(id, &node))
			continue;
		seen++;
		CPU_AND(&both, &node, set);
		if (CPU_EQUAL(&both, set))
			return id;
		if (CPU_COUNT(&both))
			return -1;	/* part of the set is here, part elsewhere */
	}
	return -1;
}

int ccom_numa_self_node(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	return ccom_numa_node_of_cpus(&set);
}

int ccom_numa_netdev_node(const char *ifname)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", ifname);
	if (read_text(path, buf, sizeof(buf)))
		return -1;
	return atoi(buf) >= 0 ? atoi(buf) : -1;
}

int ccom_numa_prefer(void *addr, size_t len, int node)
{
	unsigned long mask[NUMA_MAX_NODES / (8 * sizeof(unsigned long))] = { 0 };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)addr + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)addr + len) & ~(page - 1);

	if (node < 0 || node >= NUMA_MAX_NODES)
		return -EINVAL;
	if (hi <= lo)
		return 0;
	mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
	if (syscall(SYS_mbind, (void *)lo, (unsigned long)(hi - lo), MPOL_PREFERRED, mask,
		    (unsigned long)NUMA_MAX_NODES + 1, 0UL))
		return -errno;
	return 0;
}
