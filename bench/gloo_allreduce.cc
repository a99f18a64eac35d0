// SPDX-License-Identifier: MIT
/*
 * gloo_allreduce.cc - the Gloo side of bench/compare.sh (--gloo): Gloo's
 * allreduce of fp32 sums over its TCP transport on the loopback interface
 * (Gloo has no shared-memory transport), timed and verified like
 * bench/mpi_allreduce.c.  C++ because Gloo is a C++ library; this is a
 * benchmark peer, not part of ccom.
 *
 * Usage: gloo_allreduce -n ranks [-b minbytes] [-e maxbytes] [-f factor]
 *                       [-w warmup] [-i iters] [-a ring|bcube|auto]
 * It forks the ranks itself; they meet through a gloo FileStore in a
 * temporary directory.  Element i of rank r is (r + 1) * (1 + i % 7); the
 * result must be n(n+1)/2 * (1 + i % 7).  The time of a size is the slowest
 * rank's average (rank 0 collects them through a second allreduce, with
 * max).  Output: nccl-tests columns (size, count, type, redop, root, time,
 * algbw, busbw, #wrong); busbw = algbw * 2(n-1)/n.  Exit 1 on any wrong
 * value or failure.
 */
#include <gloo/allreduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Opts {
	int nranks = 2;
	size_t minb = 8, maxb = 32u << 20;
	double factor = 2;
	int warmup = -1, iters = -1;
	gloo::AllreduceOptions::Algorithm algo = gloo::AllreduceOptions::Algorithm::RING;
};

size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0) {
		fprintf(stderr, "gloo_allreduce: bad size '%s'\n", s);
		exit(2);
	}
	if (*end == 'K' || *end == 'k')
		v *= 1024;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		v *= 1024.0 * 1024 * 1024;
	return (size_t)v;
}

void sum_f32(void *c, const void *a, const void *b, size_t n)
{
	float *o = static_cast<float *>(c);
	const float *x = static_cast<const float *>(a), *y = static_cast<const float *>(b);

	for (size_t i = 0; i < n; i++)
		o[i] = x[i] + y[i];
}

void sum_max(void *c, const void *a, const void *b, size_t n)
{
	double *o = static_cast<double *>(c);
	const double *x = static_cast<const double *>(a), *y = static_cast<const double *>(b);

	for (size_t i = 0; i < n; i++)
		o[i] = std::max(x[i], y[i]);
}

double now_us()
{
	return std::chrono::duration<double, std::micro>(
		       std::chrono::steady_clock::now().time_since_epoch()).count();
}

void allreduce_f32(const std::shared_ptr<gloo::Context> &ctx, const Opts &o, const float *in,
		   float *out, size_t count)
{
	gloo::AllreduceOptions opts(ctx);

	opts.setInput(const_cast<float *>(in), count);
	opts.setOutput(out, count);
	opts.setAlgorithm(o.algo);
	opts.setReduceFunction(&sum_f32);
	gloo::allreduce(opts);
}

double slowest(const std::shared_ptr<gloo::Context> &ctx, double v)
{
	gloo::AllreduceOptions opts(ctx);
	double out = 0;

	opts.setInput(&v, 1);
	opts.setOutput(&out, 1);
	opts.setReduceFunction(&sum_max);
	opts.setTag(1);
	gloo::allreduce(opts);
	return out;
}

int run_rank(int rank, const Opts &o, const std::string &dir)
{
	gloo::transport::tcp::attr attr("127.0.0.1");
	auto dev = gloo::transport::tcp::CreateDevice(attr);
	gloo::rendezvous::FileStore store(dir);
	auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, o.nranks);
	long wrong_total = 0;

	ctx->setTimeout(std::chrono::seconds(120));
	ctx->connectFullMesh(store, dev);
	std::vector<float> in(o.maxb / 4 + 1), out(o.maxb / 4 + 1);
	if (rank == 0)
		printf("#\n#       size         count      type   redop    root     time   algbw   busbw  #wrong\n"
		       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n");
	for (size_t b = o.minb; b <= o.maxb; b = (size_t)std::max<double>(b + 1, b * o.factor)) {
		size_t count = b / 4;
		int w = o.warmup >= 0 ? o.warmup : (b <= 65536 ? 20 : b <= (16u << 20) ? 5 : 1);
		int it = o.iters >= 0 ? o.iters : (b <= 65536 ? 200 : b <= (16u << 20) ? 20 : 4);
		float expect_base = (float)o.nranks * (o.nranks + 1) / 2;
		long wrong = 0;

		for (size_t i = 0; i < count; i++)
			in[i] = (float)(rank + 1) * (float)(1 + i % 7);
		for (int k = 0; k < w; k++)
			allreduce_f32(ctx, o, in.data(), out.data(), count);
		double t0 = now_us();
		for (int k = 0; k < it; k++)
			allreduce_f32(ctx, o, in.data(), out.data(), count);
		double t = slowest(ctx, (now_us() - t0) / it);
		for (size_t i = 0; i < count; i++)
			if (out[i] != expect_base * (float)(1 + i % 7))
				wrong++;
		wrong_total += wrong;
		if (rank == 0) {
			double algbw = count ? (double)count * 4 / t / 1e3 : 0;

			printf("%12zu  %12zu     float     sum      -1  %7.2f  %6.2f  %6.2f  %6ld\n", count * 4,
			       count, t, algbw, algbw * 2 * (o.nranks - 1) / o.nranks, wrong);
			fflush(stdout);
		}
	}
	return wrong_total ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o;
	int c, failed = 0;

	while ((c = getopt(argc, argv, "n:b:e:f:w:i:a:")) != -1) {
		switch (c) {
		case 'n': o.nranks = atoi(optarg); break;
		case 'b': o.minb = parse_size(optarg); break;
		case 'e': o.maxb = parse_size(optarg); break;
		case 'f': o.factor = atof(optarg); break;
		case 'w': o.warmup = atoi(optarg); break;
		case 'i': o.iters = atoi(optarg); break;
		case 'a':
			if (!strcmp(optarg, "bcube"))
				o.algo = gloo::AllreduceOptions::Algorithm::BCUBE;
			else if (!strcmp(optarg, "auto"))
				o.algo = gloo::AllreduceOptions::Algorithm::UNSPECIFIED;
			else if (strcmp(optarg, "ring")) {
				fprintf(stderr, "gloo_allreduce: -a takes ring, bcube or auto\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: gloo_allreduce -n ranks [-b min] [-e max] [-f factor] [-w warmup] [-i iters] [-a ring|bcube|auto]\n");
			return 2;
		}
	}
	if (o.nranks < 1 || o.minb < 4 || o.maxb < o.minb || o.factor <= 1) {
		fprintf(stderr, "gloo_allreduce: need -n >= 1, 4 <= -b <= -e and -f > 1\n");
		return 2;
	}
	char tmpl[] = "/tmp/gloo-bench-XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("gloo_allreduce: mkdtemp");
		return 1;
	}
	std::vector<pid_t> pids;
	for (int r = 0; r < o.nranks; r++) {
		pid_t pid = fork();

		if (pid == 0) {
			int rc;

			try {
				rc = run_rank(r, o, tmpl);
			} catch (const std::exception &e) {
				fprintf(stderr, "gloo_allreduce: rank %d: %s\n", r, e.what());
				rc = 1;
			}
			fflush(stdout);
			_exit(rc);
		}
		if (pid < 0) {
			perror("gloo_allreduce: fork");
			failed = 1;
			break;
		}
		pids.push_back(pid);
	}
	for (pid_t pid : pids) {
		int st;

		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
	}
	std::string rm = std::string("rm -rf ") + tmpl;
	if (system(rm.c_str()) != 0)
		fprintf(stderr, "gloo_allreduce: could not remove %s\n", tmpl);
	return failed;
}
