/* SPDX-License-Identifier: MIT */
/*
 * numa.h - NUMA facts and memory policy for every layer (util/): which
 * node a CPU set or a network interface belongs to (sysfs), and a
 * preferred-node policy for a range of memory (mbind(2) by syscall(2), no
 * libnuma).  The placement rules that use them are in
 * Documentation/libccom/topology-and-tcp.rst ("Placement").
 */
#ifndef CCOM_UTIL_NUMA_H
#define CCOM_UTIL_NUMA_H

#include <sched.h>
#include <stddef.h>

/* Online NUMA nodes of this machine (1 when sysfs has none). */
int ccom_numa_count(void);
/* The CPUs of node @node into @set: 0, or -ENOENT when sysfs does not list it. */
int ccom_numa_node_cpus(int node, cpu_set_t *set);
/*
 * The node whose CPUs hold every CPU of @set: its id, or -1 when @set
 * spans several nodes (or is empty, or sysfs lists no node).
 */
int ccom_numa_node_of_cpus(const cpu_set_t *set);
/* ccom_numa_node_of_cpus() of this thread's affinity. */
int ccom_numa_self_node(void);
/* The numa_node sysfs gives network interface @ifname: -1 for virtual devices or unknown. */
int ccom_numa_netdev_node(const char *ifname);
/*
 * Prefer node @node for the pages of [@addr, @addr + @len) (rounded inward
 * to whole pages) that are not allocated yet: mbind(MPOL_PREFERRED).  For
 * a shared mapping of a memfd the policy belongs to the file range, so it
 * holds whichever process touches a page first.  0 (also for a range of
 * less than a page), or -errno from mbind.
 */
int ccom_numa_prefer(void *addr, size_t len, int node);

#endif
