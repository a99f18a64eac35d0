// SPDX-License-Identifier: MIT
/*
 * from_env.c - ranks started by a launcher: mpirun, srun or torchrun.
 *
 * ccomCommInitFromEnv() reads the rank and size the launcher exported
 * (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS,
 * RANK/WORLD_SIZE) and the rendezvous address (CCOM_COMM_ID, or torchrun's
 * MASTER_ADDR with MASTER_PORT + 1: torchrun's own store listens on
 * MASTER_PORT); rank 0 hosts the rendezvous there.
 *
 *   mpirun -n 4 -x CCOM_COMM_ID=node0:29500 ./from_env
 *   CCOM_COMM_ID=node0:29500 srun -n 4 ./from_env
 *   torchrun --nproc_per_node=4 --master_port=29500 --no_python ./from_env
 */
#include <stdio.h>
#include <stdlib.h>

#include <ccom.h>

#define N 1024

#define CHECK(call)								\
	do {									\
		ccomResult_t r_ = (call);					\
		if (r_ != ccomSuccess) {					\
			fprintf(stderr, "%s: %s: %s\n", #call,			\
				ccomGetErrorString(r_), ccomGetLastError(NULL));	\
			exit(1);						\
		}								\
	} while (0)

int main(void)
{
	ccomComm_t comm;
	float buf[N];
	int rank, nranks, i;

	CHECK(ccomCommInitFromEnv(&comm, NULL));
	CHECK(ccomCommUserRank(comm, &rank));
	CHECK(ccomCommCount(comm, &nranks));

	for (i = 0; i < N; i++)
		buf[i] = (float)(rank + 1);
	/* In place: sendbuff == recvbuff.  NULL: the comm's default stream. */
	CHECK(ccomAllReduce(buf, buf, N, ccomFloat32, ccomSum, comm, NULL));
	CHECK(ccomCommSynchronize(comm));

	for (i = 0; i < N; i++)
		if (buf[i] != nranks * (nranks + 1) / 2.0f) {
			fprintf(stderr, "rank %d: buf[%d] = %g, want %g\n", rank, i, buf[i],
				nranks * (nranks + 1) / 2.0f);
			return 1;
		}
	printf("rank %d of %d: allreduce ok\n", rank, nranks);
	CHECK(ccomCommFinalize(comm));
	CHECK(ccomCommDestroy(comm));
	return 0;
}
