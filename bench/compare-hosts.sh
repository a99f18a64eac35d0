#!/bin/bash
# SPDX-License-Identifier: MIT
#
# compare-hosts.sh - Open MPI and ccom on the same layout across two real
# kernels: tools/vm/run --hosts 2 boots two TCG guests (ccomvm0 10.77.0.1,
# ccomvm1 10.77.0.2) on one virtual L2 segment, 2 ranks on each.  Per
# repetition, interleaved (the order alternates), AllReduce fp32 sum at
# 1 MiB and 16 MiB:
#   mpi   Open MPI 4.1 `mpirun -H 10.77.0.1:2,10.77.0.2:2 -np 4` with
#         --mca btl tcp,vader,self over eth0, running bench/mpi_allreduce.c;
#         its daemon on ccomvm1 is started by this script's --rsh mode as
#         plm_rsh_agent (no ssh in the guests): the agent drops the command
#         in the run's shared folder and a watcher loop on ccomvm1 runs it
#         and hands back its output and status
#   ccom  ccom-perf allreduce, one process per rank started on each guest
#         by tools/vm/launch (CCOM_RANK/NRANKS/COMM_ID/COMM_SECRET_FILE
#         only: ccom finds shm inside a guest and TCP between them)
# then the median busbw per size (MB/s, out-of-place, from the time per
# op: size / time * 2(n-1)/n, as both programs print GB/s with too few
# digits for TCG) and ccom/mpi.  Not a test: it prints numbers.  TCG guests
# on a shared machine: compare the ratio, not the absolute values.
#
# usage: bench/compare-hosts.sh [--kernel REL] [--reps N] [--iters N]
#          [--warmup N] [--out DIR (inside the tree)]
#        bench/compare-hosts.sh --summary DIR   (the table of a finished run)
#   defaults: 6.12, 3 repetitions, -i 5 -w 1
set -u

TREE=$(cd "$(dirname "$0")/.." && pwd)
SELF=$TREE/bench/compare-hosts.sh
kernel=6.12
reps=3
iters=5
warmup=1
out=""
mode=host
SIZES=(-b 1M -e 16M -f 16)

# --rsh HOST CMD...: Open MPI's plm_rsh_agent inside ccomvm0.  It asks the
# watcher on HOST's guest to run CMD (orted's command line) and returns its
# output and exit status, as ssh would.
if [ "${1:-}" = --rsh ]; then
	host=$2
	shift 2
	dir=${CCB_RSH_DIR:?compare-hosts.sh --rsh: CCB_RSH_DIR unset (run by the script only)}
	case $host in 10.77.0.2|ccomvm1) ;; *)
		echo "compare-hosts.sh --rsh: no watcher for host '$host' (only 10.77.0.2)" >&2
		exit 255 ;;
	esac
	id=$(date +%s%N).$$
	printf '%s\n' "$*" > "$dir/req.$id.tmp" && mv "$dir/req.$id.tmp" "$dir/req.$id"
	# orted lives as long as the job; a job is bounded by the caller's timeout.
	while [ ! -e "$dir/done.$id" ]; do sleep 0.2; done
	cat "$dir/out.$id"
	exit "$(cat "$dir/done.$id")"
fi

# summary DIR: the median busbw table of a run's outputs.
summary()
{
	local f v
	# Each table: size count type redop root time(us) ...; column 9 is
	# the out-of-place #wrong in both programs.
	for f in "$1"/mpi.*.txt "$1"/ccom.*/rank0.log; do
		[ -f "$f" ] || continue
		case $f in */mpi.*) v=mpi ;; *) v=ccom ;; esac
		awk -v v=$v '$1 ~ /^[0-9]+$/ && NF >= 9 && ($1 == 1048576 || $1 == 16777216) {
			if ($9 != 0) print v, "WRONG", 0; else print v, $1, $1 / $6 * 1.5 }' "$f"
	done > "$1/busbw.txt"
	if grep -q WRONG "$1/busbw.txt"; then
		echo "compare-hosts.sh: a run reported wrong results; see $1" >&2
		return 1
	fi
	python3 - "$1/busbw.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("%-8s %14s %14s %9s   (median busbw MB/s over the runs, out-of-place)" %
      ("size", "mpi (runs)", "ccom (runs)", "ccom/mpi"))
for size in (1048576, 16777216):
    med = {}
    for v in ("mpi", "ccom"):
        x = [float(r[2]) for r in rows if r[0] == v and int(r[1]) == size]
        med[v] = (statistics.median(x), len(x)) if x else (None, 0)
    m, c = med["mpi"][0], med["ccom"][0]
    print("%-8s %10s (%d) %10s (%d) %9s" % ("%d MiB" % (size >> 20),
          "%.2f" % m if m else "-", med["mpi"][1], "%.2f" % c if c else "-", med["ccom"][1],
          "%.2f" % (c / m) if m and c else "-"))
    for v in ("mpi", "ccom"):
        print("  %-5s each run: %s" % (v, " ".join("%.2f" % float(r[2]) for r in rows
                                        if r[0] == v and int(r[1]) == size)))
PY
}

while [ $# -gt 0 ]; do
	case $1 in
	--summary) summary "${2:?}"; exit ;;
	--kernel) kernel=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--warmup) warmup=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--in-guest) mode=guest; shift ;;
	-h|--help) sed -n '3,24p' "$0"; exit 0 ;;
	*) echo "compare-hosts.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$reps" "$iters" "$warmup"; do
	case $v in ''|*[!0-9]*) echo "compare-hosts.sh: '$v' is not a number" >&2; exit 2 ;; esac
done

if [ "$mode" = host ]; then
	if ! command -v mpicc.openmpi > /dev/null || ! command -v mpirun.openmpi > /dev/null; then
		echo "compare-hosts.sh: Open MPI is missing; apt-get install -y openmpi-bin libopenmpi-dev" >&2
		exit 2
	fi
	out=${out:-$TREE/build/bench-hosts/$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
	case $out in "$TREE"/*) ;; *)
		echo "compare-hosts.sh: --out must be inside $TREE (the guests write there)" >&2; exit 2 ;;
	esac
	make -C "$TREE" -s perf > "$out/make.log" 2>&1 || { cat "$out/make.log"; exit 2; }
	mpicc.openmpi -O2 -Wall -Wextra -Werror -o "$out/mpi_allreduce" "$TREE/bench/mpi_allreduce.c" ||
		exit 2
	echo "# compare-hosts: 2 TCG guests ($kernel) x 2 ranks, $reps reps, -w $warmup -i $iters; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	NCCOM_VM_HOSTS_OUT=$out/vm "$TREE/tools/vm/run" --hosts 2 --kernel "$kernel" --mem 1536 \
		--timeout $((600 + reps * 900)) -- "$SELF" --in-guest --out "$out" --reps "$reps" \
		--iters "$iters" --warmup "$warmup" > "$out/vm.log" 2>&1
	rc=$?
	echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg); logs in $out"
	summary "$out" || rc=1
	[ $rc -eq 0 ] || tail -n 30 "$out/vm.log"
	exit $rc
fi

# ---- in each guest ----
me=${CCOM_VM_HOST:?}
vmout=${CCOM_VM_OUT:?}
rsh=$vmout/rsh
mkdir -p "$rsh"

barrier()
{
	touch "$vmout/bar.$1.$me"
	for _ in $(seq 12000); do
		[ -e "$vmout/bar.$1.0" ] && [ -e "$vmout/bar.$1.1" ] && return 0
		sleep 0.1
	done
	echo "compare-hosts.sh: barrier $1: the other guest did not arrive within 1200 s" >&2
	exit 1
}

if [ "$me" = 1 ]; then
	# The watcher: runs what the --rsh agent on ccomvm0 drops here.
	(
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		while [ ! -e "$rsh/stop" ]; do
			for f in "$rsh"/req.*; do
				[ -e "$f" ] || continue
				case $f in *.tmp) continue ;; esac
				id=${f#"$rsh"/req.}
				mv "$f" "$rsh/run.$id" || continue
				(bash -c "$(cat "$rsh/run.$id")" > "$rsh/out.$id" 2>&1 < /dev/null
				 echo $? > "$rsh/done.$id") &
			done
			sleep 0.2
		done
	) &
	watcher=$!
fi

port=29700
for rep in $(seq "$reps"); do
	if [ $((rep % 2)) = 1 ]; then order="mpi ccom"; else order="ccom mpi"; fi
	for v in $order; do
		barrier "$v.$rep"
		if [ "$v" = mpi ] && [ "$me" = 0 ]; then
			CCB_RSH_DIR=$rsh timeout 900 mpirun.openmpi --allow-run-as-root -np 4 \
				-H 10.77.0.1:2,10.77.0.2:2 --bind-to none \
				--mca plm_rsh_agent "$SELF --rsh" --mca plm_rsh_no_tree_spawn 1 \
				--mca btl tcp,vader,self --mca btl_tcp_if_include 10.77.0.0/24 \
				--mca oob_tcp_if_include 10.77.0.0/24 -x CCB_RSH_DIR \
				"$out/mpi_allreduce" "${SIZES[@]}" -w "$warmup" -i "$iters" \
				> "$out/mpi.$rep.txt" 2>&1
			echo "mpi rep $rep: rc=$? ($(date +%T))"
		elif [ "$v" = ccom ]; then
			port=$((port + 1))
			timeout 900 "$TREE/tools/vm/launch" -n 4 -p "$port" -o "$out/ccom.$rep" -- \
				"$TREE/build/bin/ccom-perf" allreduce "${SIZES[@]}" -w "$warmup" -i "$iters"
			echo "ccom rep $rep on ccomvm$me: rc=$? ($(date +%T))"
		fi
		barrier "$v.$rep.done"
	done
done
if [ "$me" = 1 ]; then
	touch "$rsh/stop"
	wait "$watcher"
fi
exit 0
