// SPDX-License-Identifier: MIT
/*
 * Description: one thread drives 4 ranks created by ccomCommInitAll:
 * allreduces and a send/recv ring issued inside ccomGroupStart/End
 * (nested), then synchronized per communicator and checked; ccomAllReduce
 * buffers from ccomMemAlloc; argument validation of the collective API
 * (bad dtype, op, root, peer, NULL buffers, foreign stream, unmatched
 * ccomGroupEnd, ccomMemFree of a foreign pointer) with the exact codes.
 */
#include "coll_util.h"

#define N 4
#define COUNT 10007

static int run_group(ccomComm_t *comms, float **bufs, float **outs)
{
	int r, i;

	for (r = 0; r < N; r++)
		for (i = 0; i < COUNT; i++)
			bufs[r][i] = (float)(r + 1 + i % 3);
	T_CCOM(ccomGroupStart(), ccomSuccess);
	T_CCOM(ccomGroupStart(), ccomSuccess);	/* nested */
	for (r = 0; r < N; r++)
		T_CCOM(ccomAllReduce(bufs[r], outs[r], COUNT, ccomFloat32, ccomSum, comms[r], NULL),
		       ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	for (r = 0; r < N; r++) {
		T_CCOM(ccomSend(bufs[r], COUNT, ccomFloat32, (r + 1) % N, comms[r], NULL), ccomSuccess);
		T_CCOM(ccomRecv(bufs[r] + COUNT, COUNT, ccomFloat32, (r + N - 1) % N, comms[r], NULL),
		       ccomSuccess);
	}
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	for (r = 0; r < N; r++)
		T_CCOM(ccomCommSynchronize(comms[r]), ccomSuccess);
	for (r = 0; r < N; r++)
		for (i = 0; i < COUNT; i++) {
			T_CHECK(outs[r][i] == (float)(10 + N * (i % 3)), "rank %d element %d: %g", r, i,
				outs[r][i]);
			T_CHECK(bufs[r][COUNT + i] == (float)((r + N - 1) % N + 1 + i % 3),
				"recv rank %d element %d: %g", r, i, bufs[r][COUNT + i]);
		}
	return T_PASS;
}

static int check_args(ccomComm_t c0, ccomComm_t c1)
{
	float x[4] = { 0 }, y[4];
	ccomStream_t s1;
	int bad = 7;

	T_CCOM(ccomAllReduce(x, y, 4, (ccomDataType_t)99, ccomSum, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(x, y, 4, ccomFloat32, (ccomRedOp_t)9, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(NULL, y, 4, ccomFloat32, ccomSum, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(x, NULL, 4, ccomFloat32, ccomSum, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(x, y, 4, ccomFloat32, ccomSum, NULL, NULL), ccomInvalidArgument);
	T_CCOM(ccomBroadcast(x, y, 4, ccomFloat32, N, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomReduce(x, y, 4, ccomFloat32, ccomSum, -1, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomSend(x, 4, ccomFloat32, N + 3, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomRecv(NULL, 4, ccomFloat32, 1, c0, NULL), ccomInvalidArgument);
	T_CCOM(ccomStreamCreate(c1, &s1), ccomSuccess);
	T_CCOM(ccomAllReduce(x, y, 4, ccomFloat32, ccomSum, c0, s1), ccomInvalidArgument);
	T_CCOM(ccomStreamDestroy(s1), ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomInvalidUsage);
	T_CCOM(ccomMemFree(c0, &bad), ccomInvalidArgument);
	T_CCOM(ccomMemAlloc(c0, NULL, 64), ccomInvalidArgument);
	/* Count 0 with NULL buffers is a valid no-op. */
	T_CCOM(ccomAllReduce(NULL, NULL, 0, ccomFloat32, ccomSum, c0, NULL), ccomSuccess);
	return T_PASS;
}

int main(void)
{
	ccomComm_t comms[N];
	float *bufs[N], *outs[N];
	int r, rc;

	T_CCOM(ccomCommInitAll(comms, N, NULL), ccomSuccess);
	for (r = 0; r < N; r++) {
		bufs[r] = malloc(2 * COUNT * sizeof(float));
		T_CCOM(ccomMemAlloc(comms[r], (void **)&outs[r], COUNT * sizeof(float)), ccomSuccess);
		T_CHECK(bufs[r], "out of memory");
	}
	rc = run_group(comms, bufs, outs);
	if (!rc)
		rc = run_group(comms, bufs, outs);	/* twice: state is reusable */
	if (!rc)
		rc = check_args(comms[0], comms[1]);
	for (r = 0; r < N; r++) {
		T_CCOM(ccomMemFree(comms[r], outs[r]), ccomSuccess);
		free(bufs[r]);
	}
	ccomGroupStart();
	for (r = 0; r < N; r++)
		ccomCommFinalize(comms[r]);
	ccomGroupEnd();
	for (r = 0; r < N; r++)
		ccomCommDestroy(comms[r]);
	if (!rc)
		printf("InitAll + groups + argument checks passed\n");
	return rc;
}
