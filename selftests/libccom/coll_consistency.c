// SPDX-License-Identifier: MIT
/*
 * Description: AllReduce results are bitwise identical on every rank for
 * floating-point data whose sum depends on the order of the additions
 * (fp32, fp16, bf16, fp64 sums of non-integer values), on 3 and 4 ranks,
 * for the LL path, the direct engine (CCOM_PROTO=simple), the ring
 * (CCOM_ALGO=ring) and LL128 (CCOM_PROTO=ll128): every rank hashes its
 * output and the hashes are all-gathered and compared.
 */
#include "coll_util.h"

static const size_t counts[] = { 7, 1023, 100003 };

static uint64_t fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

static int cons_rank(int rank, int n, void *arg)
{
	static const ccomDataType_t dts[] = { ccomFloat32, ccomFloat16, ccomBfloat16, ccomFloat64 };
	struct ct_job *j = arg;
	uint64_t h, all[8];
	ccomComm_t comm;
	char *in, *out;
	size_t c, i, bytes;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	in = malloc(100003 * 8);
	out = malloc(100003 * 8);
	T_CHECK(in && out, "out of memory");
	for (int d = 0; d < 4; d++)
		for (c = 0; c < 3; c++) {
			for (i = 0; i < counts[c]; i++)
				ct_put(in, i, dts[d], 0.1 * (rank + 1) * (double)(i % 17) + 1e-3 * (double)i +
						      1.0 / (3.0 + rank));
			T_CCOM(ccomAllReduce(in, out, counts[c], dts[d], ccomSum, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			bytes = counts[c] * ct_size(dts[d]);
			h = fnv((unsigned char *)out, bytes);
			T_CCOM(ccomAllGather(&h, all, 1, ccomUint64, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			for (int r = 0; r < n; r++)
				T_CHECK(all[r] == h, "dtype %d count %zu: rank %d and rank %d differ", dts[d],
					counts[c], rank, r);
		}
	ccomCommFinalize(comm);
	ccomCommDestroy(comm);
	free(in);
	free(out);
	return T_PASS;
}

int main(void)
{
	static const char *const envs[] = { NULL, "CCOM_PROTO=simple", "CCOM_ALGO=ring",
					    "CCOM_PROTO=ll128" };

	for (int e = 0; e < 4; e++)
		for (int n = 3; n <= 4; n++) {
			struct ct_job j = { .env = { envs[e] } };

			if (ct_run(&j, n, cons_rank, 120))
				return T_FAIL;
		}
	printf("allreduce results bitwise identical on every rank (LL, direct, ring, LL128)\n");
	return T_PASS;
}
