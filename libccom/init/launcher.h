/* SPDX-License-Identifier: MIT */
/*
 * launcher.h - rank, size and rendezvous address from the environment of
 * common launchers (used by ccomCommInitFromEnv and by ccom-perf).
 */
#ifndef CCOM_INIT_LAUNCHER_H
#define CCOM_INIT_LAUNCHER_H

#include <stddef.h>

/*
 * Find this process's rank and the job size.  Precedence (first complete
 * pair wins): CCOM_RANK/CCOM_NRANKS, OMPI_COMM_WORLD_RANK/SIZE,
 * PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS, RANK/WORLD_SIZE.
 * @source (may be NULL) gets the name of the pair used.
 * Returns 0, -ENOENT when no launcher variables are set, or -EINVAL for a
 * malformed or inconsistent pair (error set).
 */
int ccom_launcher_rank(int *rank, int *nranks, const char **source);

/*
 * Rendezvous address: CCOM_COMM_ID, else MASTER_ADDR:MASTER_PORT (torchrun
 * style, IPv6 addresses bracketed).  Returns 0, -ENOENT if neither is set.
 */
int ccom_launcher_addr(char *addr, size_t len, const char **source);

#endif
