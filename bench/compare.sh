#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/compare.sh - ccom vs Open MPI (and optionally MPICH and Gloo), side by side:
# the same fp32-sum allreduce sizes and rank counts through MPI_Allreduce
# (bench/mpi_allreduce.c) and through `ccom-perf allreduce`, run alternately
# (the order flips every size and repetition) so that machine noise hits both
# alike, then a table of medians and ratios.  Not part of `make check`.
#
# Usage: bench/compare.sh [options]
#   --mode shm|tcp|all   shm: ranks on this host (default); tcp: 2 ranks in two
#                        network namespaces joined by a veth pair, Open MPI
#                        with --mca btl tcp,self vs ccom over net_socket (root)
#   --reps N             repetitions per point (default 3)
#   --ranks "2 4 8"      rank counts of the shm mode
#   --sizes "8 ..."      message sizes in bytes (K/M suffixes allowed)
#   --mpich              also run MPICH (mpirun.mpich) in shm mode
#   --gloo               also run Gloo (bench/gloo_allreduce.cc: its ring
#                        allreduce over TCP on loopback; Gloo has no shm)
#   --no-install         do not apt-get missing MPI packages
#   --ccom-args "..."    extra ccom-perf arguments (e.g. "-m": ccomMemAlloc buffers)
#   --layout "2x2 2x4"   with --mode tcp: instead of the 2-rank pair, H network
#                        namespaces (simulated hosts on one bridge) x L ranks
#                        each, per layout; ccom once per --ccom-algos entry vs
#                        Open MPI (--mca btl tcp,self, and --mca coll han,...
#                        with --han), all interleaved per size and repetition
#   --ccom-algos "auto ring"  CCOM_ALGO values of the layout runs (auto: the
#                        tuner's choice, hierarchical where it prices lower)
#   --han                also run Open MPI with --mca coll han,tuned,libnbc,basic,self
#                        (layout runs give Open MPI mpi_yield_when_idle 1: L
#                        ranks per host oversubscribe small machines, where its
#                        busy polling would otherwise starve the peer ranks)
#   --no-ompi            layout runs: ccom only (to compare CCOM_ALGO values)
#   --coll NAME          layout runs with --no-ompi: this ccom-perf collective
#                        instead of allreduce (e.g. alltoall; sizes per rank)
#   --tune-log           layout runs: the ccom-auto runs log the tuner's choices
#                        (CCOM_DEBUG=INFO CCOM_DEBUG_SUBSYS=TUNE: the choice and
#                        every candidate's price) into their output files, and
#                        the report lists rank 0's choices per layout
#   --base PATH          also run this ccom-perf binary (an older build: "before"
#                        and "after" interleaved in one run, same machine state)
#   --bound              with --mode tcp: also run bench/tcp_bound between the
#                        same namespaces, interleaved: S bytes each way at once
#                        over one TCP connection, no reduction - the ceiling of
#                        a 2-rank AllReduce over TCP on this machine
#   --rt                 with --mode tcp: run every process under `chrt -f 1`
#                        (SCHED_FIFO: other jobs on a shared machine cannot
#                        preempt them; needs root)
# Environment: BUILD (default build), OUT (results directory).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
MODE=shm REPS=3 RANKS="2 4 8" SIZES="" MPICH=0 GLOO=0 INSTALL=1 CCOM_ARGS="" BASE=""
LAYOUTS="" CCOM_ALGOS="auto ring" HAN=0 OMPI=1 COLL=allreduce BOUND=0 RT="" TUNE_LOG=0
while [ $# -gt 0 ]; do
	case $1 in
	--mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--ranks) RANKS=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--mpich) MPICH=1; shift ;;
	--gloo) GLOO=1; shift ;;
	--no-install) INSTALL=0; shift ;;
	--ccom-args) CCOM_ARGS=$2; shift 2 ;;
	--layout) LAYOUTS=$2; shift 2 ;;
	--ccom-algos) CCOM_ALGOS=$2; shift 2 ;;
	--han) HAN=1; shift ;;
	--no-ompi) OMPI=0; shift ;;
	--coll) COLL=$2; shift 2 ;;
	--base) BASE=$2; shift 2 ;;
	--bound) BOUND=1; shift ;;
	--rt) RT="chrt -f 1"; shift ;;
	--tune-log) TUNE_LOG=1; shift ;;
	-h|--help) sed -n '3,49p' "$0"; exit 0 ;;
	*) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $MODE in shm|tcp|all) ;; *) echo "compare.sh: --mode must be shm, tcp or all" >&2; exit 2 ;; esac
for l in $LAYOUTS; do
	case $l in [1-4]x[1-8]) ;; *) echo "compare.sh: --layout takes HxL with H <= 4 hosts and L <= 8 ranks (got $l)" >&2; exit 2 ;; esac
done
[ -n "$LAYOUTS" ] && [ "$MODE" = shm ] && { echo "compare.sh: --layout needs --mode tcp" >&2; exit 2; }
[ "$COLL" != allreduce ] && [ "$OMPI" = 1 ] && { echo "compare.sh: --coll needs --no-ompi (bench/mpi_allreduce.c runs allreduce only)" >&2; exit 2; }

case $BUILD in /*) BDIR=$BUILD ;; *) BDIR="$ROOT/$BUILD" ;; esac
B="$BDIR/bench"
OUT=${OUT:-$B/run-$(date -u +%Y%m%dT%H%M%S)}
PERF="$BDIR/bin/ccom-perf"
mkdir -p "$B" "$OUT"
RES="$OUT/results.tsv"
: > "$RES"

log() { echo "[compare] $*" >&2; }

to_bytes() {
	local s=$1
	case $s in
	*K) echo $(( ${s%K} * 1024 )) ;;
	*M) echo $(( ${s%M} * 1024 * 1024 )) ;;
	*G) echo $(( ${s%G} * 1024 * 1024 * 1024 )) ;;
	*) echo "$s" ;;
	esac
}

# Warmup and iteration counts per size, identical for every library.
iters_for() {
	local b=$1
	if [ "$b" -le 4096 ]; then echo "50 1000"
	elif [ "$b" -le 65536 ]; then echo "20 200"
	elif [ "$b" -le 1048576 ]; then echo "5 50"
	elif [ "$b" -le 16777216 ]; then echo "2 10"
	else echo "1 4"; fi
}

install_mpi() {
	local pkgs=()
	command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null ||
		pkgs+=(openmpi-bin libopenmpi-dev)
	if [ "$MPICH" = 1 ]; then
		command -v mpirun.mpich >/dev/null && command -v mpicc.mpich >/dev/null ||
			pkgs+=(mpich libmpich-dev)
	fi
	if [ "$GLOO" = 1 ]; then
		[ -e /usr/include/gloo/allreduce.h ] && command -v g++ >/dev/null ||
			pkgs+=(libgloo-dev g++)
	fi
	[ ${#pkgs[@]} -eq 0 ] && return 0
	if [ "$INSTALL" = 0 ] || [ "$(id -u)" != 0 ]; then
		echo "compare.sh: missing ${pkgs[*]}; run as root (apt-get) or install them" >&2
		exit 1
	fi
	log "installing ${pkgs[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >"$OUT/apt.log" 2>&1
}

build() {
	log "building ccom-perf and mpi_allreduce"
	make -C "$ROOT" BUILD="$BUILD" perf >"$OUT/build.log" 2>&1 ||
		{ tail -20 "$OUT/build.log"; exit 1; }
	mpicc.openmpi -O2 -o "$B/mpi_allreduce.openmpi" "$ROOT/bench/mpi_allreduce.c"
	[ "$MPICH" = 1 ] && mpicc.mpich -O2 -o "$B/mpi_allreduce.mpich" "$ROOT/bench/mpi_allreduce.c"
	[ "$BOUND" = 1 ] && gcc -O2 -Wall -Wextra -Werror -o "$B/tcp_bound" "$ROOT/bench/tcp_bound.c"
	[ "$GLOO" = 1 ] && g++ -O2 -std=c++17 -Wall -Wextra -Werror -o "$B/gloo_allreduce" \
		"$ROOT/bench/gloo_allreduce.cc" -lgloo -lpthread
	return 0
}

# Extract "time busbw" of the out-of-place column from nccl-tests-style output
# (size count type redop root time algbw busbw #wrong ...); fail on wrong values.
parse() {
	local file=$1 bytes=$2
	awk -v b="$bytes" '$1 == b && $1 !~ /^#/ { print $6, $8, $9; exit }' "$file"
}

record() {
	local lib=$1 mode=$2 n=$3 bytes=$4 file=$5 tb
	tb=$(parse "$file" "$bytes")
	if [ -z "$tb" ]; then
		log "no result for $lib n=$n size=$bytes; output in $file"
		tail -5 "$file" >&2
		return 1
	fi
	set -- $tb
	if [ "$3" != 0 ]; then
		log "$lib n=$n size=$bytes reported $3 wrong values ($file)"
		return 1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$lib" "$n" "$bytes" "$1" "$2" >>"$RES"
}

run_ompi_shm() {
	local n=$1 bytes=$2 w=$3 i=$4 f=$5
	timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$n" \
		"$B/mpi_allreduce.openmpi" -b "$bytes" -e "$bytes" -w "$w" -i "$i" >"$f" 2>&1
}

run_mpich_shm() {
	local n=$1 bytes=$2 w=$3 i=$4 f=$5
	timeout 600 mpirun.mpich -np "$n" "$B/mpi_allreduce.mpich" -b "$bytes" -e "$bytes" \
		-w "$w" -i "$i" >"$f" 2>&1
}

run_gloo_shm() {
	local n=$1 bytes=$2 w=$3 i=$4 f=$5
	timeout 600 "$B/gloo_allreduce" -n "$n" -b "$bytes" -e "$bytes" -w "$w" -i "$i" >"$f" 2>&1
}

run_ccom_shm() {
	local n=$1 bytes=$2 w=$3 i=$4 f=$5
	timeout 600 "$PERF" allreduce -n "$n" -b "$bytes" -e "$bytes" -d float -o sum \
		-w "$w" -i "$i" $CCOM_ARGS >"$f" 2>&1
}

run_base_shm() {
	local n=$1 bytes=$2 w=$3 i=$4 f=$5
	timeout 600 "$BASE" allreduce -n "$n" -b "$bytes" -e "$bytes" -d float -o sum \
		-w "$w" -i "$i" $CCOM_ARGS >"$f" 2>&1
}

bench_shm() {
	local rep n s bytes w i libs k=0 lib f
	for rep in $(seq 1 "$REPS"); do
		for n in $RANKS; do
			for s in ${SIZES:-8 1K 64K 1M 16M 256M}; do
				bytes=$(to_bytes "$s")
				read -r w i < <(iters_for "$bytes")
				libs="ompi ccom"
				[ "$MPICH" = 1 ] && libs="$libs mpich"
				[ "$GLOO" = 1 ] && libs="$libs gloo"
				[ -n "$BASE" ] && libs="$libs base"
				# Alternate who goes first.
				k=$((k + 1))
				[ $((k % 2)) = 0 ] && libs=$(echo "$libs" | awk '{ for (j = NF; j > 0; j--) printf "%s ", $j }')
				for lib in $libs; do
					f="$OUT/shm-$lib-n$n-$bytes-rep$rep.txt"
					log "shm rep $rep/$REPS: $lib n=$n size=$bytes"
					"run_${lib}_shm" "$n" "$bytes" "$w" "$i" "$f" || true
					record "$lib" shm "$n" "$bytes" "$f" || true
				done
			done
		done
	done
}

# ---------------------------------------------------------------- TCP mode
NS0=ccbench0 NS1=ccbench1 PORT=29500

netns_down() {
	ip netns del "$NS0" 2>/dev/null || true
	ip netns del "$NS1" 2>/dev/null || true
}

netns_up() {
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
		echo "compare.sh: --mode tcp needs root and ip(8) (iproute2)" >&2
		exit 1
	fi
	netns_down
	trap netns_down EXIT INT TERM
	ip netns add "$NS0"
	ip netns add "$NS1"
	ip link add ccbv0 type veth peer name ccbv1
	ip link set ccbv0 netns "$NS0"
	ip link set ccbv1 netns "$NS1"
	ip -n "$NS0" addr add 10.231.0.1/24 dev ccbv0
	ip -n "$NS1" addr add 10.231.0.2/24 dev ccbv1
	for ns in "$NS0" "$NS1"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NS0" link set ccbv0 up
	ip -n "$NS1" link set ccbv1 up
	# Open MPI starts its second daemon through this "rsh": into the other namespace.
	cat >"$B/netns-rsh" <<EOF
#!/bin/sh
shift
exec ip netns exec $NS1 sh -c "\$*"
EOF
	chmod +x "$B/netns-rsh"
	printf '%s slots=1\n10.231.0.2 slots=1\n' "$(hostname)" >"$B/netns-hosts"
}

run_ompi_tcp() {
	local bytes=$1 w=$2 i=$3 f=$4
	timeout 600 $RT ip netns exec "$NS0" mpirun.openmpi --allow-run-as-root -np 2 \
		--hostfile "$B/netns-hosts" --map-by node --bind-to none \
		--mca plm_rsh_agent "$B/netns-rsh" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include 10.231.0.0/24 \
		--mca btl tcp,self --mca btl_tcp_if_include 10.231.0.0/24 \
		"$B/mpi_allreduce.openmpi" -b "$bytes" -e "$bytes" -w "$w" -i "$i" >"$f" 2>&1
}

run_ccom_tcp() {
	local bytes=$1 w=$2 i=$3 f=$4 pid rc=0
	PORT=$((PORT + 1))
	local env="CCOM_NRANKS=2 CCOM_COMM_ID=10.231.0.1:$PORT CCOM_SOCKET_IFNAME=ccbv"
	# shellcheck disable=SC2086
	timeout 600 $RT ip netns exec "$NS1" env $env CCOM_RANK=1 CCOM_HOSTID="$NS1" \
		"$PERF" allreduce -b "$bytes" -e "$bytes" -d float -o sum -w "$w" -i "$i" $CCOM_ARGS \
		>"$f.rank1" 2>&1 &
	pid=$!
	# shellcheck disable=SC2086
	timeout 600 $RT ip netns exec "$NS0" env $env CCOM_RANK=0 CCOM_HOSTID="$NS0" \
		"$PERF" allreduce -b "$bytes" -e "$bytes" -d float -o sum -w "$w" -i "$i" $CCOM_ARGS \
		>"$f" 2>&1 || rc=$?
	wait "$pid" || rc=$?
	return $rc
}

run_base_tcp() {
	PERF=$BASE run_ccom_tcp "$@"
}

run_bound_tcp() {
	local bytes=$1 w=$2 i=$3 f=$4 pid rc=0
	PORT=$((PORT + 1))
	timeout 600 $RT ip netns exec "$NS1" "$B/tcp_bound" -c "10.231.0.1:$PORT" -b "$bytes" \
		-w "$w" -i "$i" -p >"$f.peer" 2>&1 &
	pid=$!
	timeout 600 $RT ip netns exec "$NS0" "$B/tcp_bound" -l "$PORT" -b "$bytes" -w "$w" -i "$i" \
		-p >"$f" 2>&1 || rc=$?
	wait "$pid" || rc=$?
	return $rc
}

bench_tcp() {
	local rep s bytes w i k=0 lib libs f
	netns_up
	for rep in $(seq 1 "$REPS"); do
		for s in ${SIZES:-8 64K 1M 16M 256M}; do
			bytes=$(to_bytes "$s")
			read -r w i < <(iters_for "$bytes")
			k=$((k + 1))
			libs="ompi ccom"
			[ -n "$BASE" ] && libs="$libs base"
			[ "$BOUND" = 1 ] && libs="$libs bound"
			[ $((k % 2)) = 0 ] && libs=$(echo "$libs" | awk '{ for (j = NF; j > 0; j--) printf "%s ", $j }')
			for lib in $libs; do
				f="$OUT/tcp-$lib-n2-$bytes-rep$rep.txt"
				log "tcp rep $rep/$REPS: $lib size=$bytes"
				"run_${lib}_tcp" "$bytes" "$w" "$i" "$f" || true
				record "$lib" tcp 2 "$bytes" "$f" || true
			done
		done
	done
	netns_down
	trap - EXIT INT TERM
}


# ------------------------------------------------- TCP mode, H hosts x L ranks
# Host h is namespace ccbh<h> with veth ccbh0 at 10.231.1.<h+1>/24, the other
# end on bridge br0 of namespace ccbsw.
LNS_SW=ccbsw LMAXH=4

layout_down() {
	local h
	for h in $(seq 0 $((LMAXH - 1))); do ip netns del "ccbh$h" 2>/dev/null || true; done
	ip netns del "$LNS_SW" 2>/dev/null || true
}

layout_up() {
	local H=$1 h
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
		echo "compare.sh: --layout needs root and ip(8) (iproute2)" >&2
		exit 1
	fi
	layout_down
	trap layout_down EXIT INT TERM
	ip netns add "$LNS_SW"
	ip -n "$LNS_SW" link add br0 type bridge
	ip -n "$LNS_SW" link set br0 up
	: >"$B/layout-hosts"
	{
		echo '#!/bin/sh'
		echo '# Open MPI starts its daemons through this "rsh": into the host namespace of the address.'
		echo 'host=$1; shift'
		echo 'case $host in'
	} >"$B/layout-rsh"
	for h in $(seq 0 $((H - 1))); do
		ip netns add "ccbh$h"
		ip link add "ccbx$h" type veth peer name "ccbs$h"
		ip link set "ccbx$h" netns "ccbh$h"
		ip link set "ccbs$h" netns "$LNS_SW"
		ip -n "ccbh$h" link set "ccbx$h" name ccbh0
		ip -n "ccbh$h" addr add "10.231.1.$((h + 1))/24" dev ccbh0
		ip -n "ccbh$h" link set ccbh0 up
		ip -n "ccbh$h" link set lo up
		ip -n "$LNS_SW" link set "ccbs$h" master br0
		ip -n "$LNS_SW" link set "ccbs$h" up
		echo "10.231.1.$((h + 1))) exec ip netns exec ccbh$h sh -c \"\$*\" ;;" >>"$B/layout-rsh"
	done
	echo 'esac; echo "layout-rsh: unknown host $host" >&2; exit 1' >>"$B/layout-rsh"
	chmod +x "$B/layout-rsh"
}

run_ompi_layout() {	# H L han bytes w i file
	local H=$1 L=$2 han=$3 bytes=$4 w=$5 i=$6 f=$7 h coll=()
	: >"$B/layout-hosts"
	for h in $(seq 0 $((H - 1))); do echo "10.231.1.$((h + 1)) slots=$L" >>"$B/layout-hosts"; done
	[ "$han" = 1 ] && coll=(--mca coll "han,tuned,libnbc,basic,self" --mca coll_han_priority 100)
	timeout 600 ip netns exec ccbh0 mpirun.openmpi --allow-run-as-root -np $((H * L)) \
		--hostfile "$B/layout-hosts" --map-by slot --bind-to none \
		--mca plm_rsh_agent "$B/layout-rsh" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include 10.231.1.0/24 \
		--mca btl tcp,self --mca btl_tcp_if_include 10.231.1.0/24 "${coll[@]}" \
		--mca mpi_yield_when_idle 1 \
		"$B/mpi_allreduce.openmpi" -b "$bytes" -e "$bytes" -w "$w" -i "$i" >"$f" 2>&1
}

run_ccom_layout() {	# H L algo bytes w i file
	local H=$1 L=$2 algo=$3 bytes=$4 w=$5 i=$6 f=$7 h l r pids=() rc=0 ae=""
	PORT=$((PORT + 1))
	[ "$algo" != auto ] && ae="CCOM_ALGO=$algo"
	[ "$algo" = auto ] && [ "$TUNE_LOG" = 1 ] && ae="CCOM_DEBUG=INFO CCOM_DEBUG_SUBSYS=TUNE"
	local env="CCOM_NRANKS=$((H * L)) CCOM_COMM_ID=10.231.1.1:$PORT CCOM_SOCKET_IFNAME=ccbh $ae"
	for h in $(seq 0 $((H - 1))); do
		for l in $(seq 0 $((L - 1))); do
			r=$((h * L + l))
			[ $r = 0 ] && continue
			# shellcheck disable=SC2086
			timeout 600 ip netns exec "ccbh$h" env $env CCOM_RANK=$r CCOM_HOSTID="ccbh$h" \
				"$PERF" "$COLL" -b "$bytes" -e "$bytes" -d float -o sum -w "$w" -i "$i" \
				$CCOM_ARGS >"$f.rank$r" 2>&1 &
			pids+=($!)
		done
	done
	# shellcheck disable=SC2086
	timeout 600 ip netns exec ccbh0 env $env CCOM_RANK=0 CCOM_HOSTID=ccbh0 \
		"$PERF" "$COLL" -b "$bytes" -e "$bytes" -d float -o sum -w "$w" -i "$i" $CCOM_ARGS \
		>"$f" 2>&1 || rc=$?
	for r in "${pids[@]}"; do wait "$r" || rc=$?; done
	return $rc
}

bench_layout() {
	local lay H L rep s bytes w i k=0 lib libs f a
	for lay in $LAYOUTS; do
		H=${lay%x*} L=${lay#*x}
		layout_up "$H"
		for rep in $(seq 1 "$REPS"); do
			for s in ${SIZES:-8 64K 1M 16M 256M}; do
				bytes=$(to_bytes "$s")
				read -r w i < <(iters_for "$bytes")
				libs=""
				[ "$OMPI" = 1 ] && libs="ompi"
				[ "$OMPI" = 1 ] && [ "$HAN" = 1 ] && libs="$libs ompi-han"
				for a in $CCOM_ALGOS; do libs="$libs ccom-$a"; done
				# Alternate who goes first.
				k=$((k + 1))
				[ $((k % 2)) = 0 ] && libs=$(echo "$libs" | awk '{ for (j = NF; j > 0; j--) printf "%s ", $j }')
				for lib in $libs; do
					f="$OUT/tcp$lay-$lib-$bytes-rep$rep.txt"
					log "tcp $lay rep $rep/$REPS: $lib size=$bytes"
					case $lib in
					ompi) run_ompi_layout "$H" "$L" 0 "$bytes" "$w" "$i" "$f" || true ;;
					ompi-han) run_ompi_layout "$H" "$L" 1 "$bytes" "$w" "$i" "$f" || true ;;
					ccom-*) run_ccom_layout "$H" "$L" "${lib#ccom-}" "$bytes" "$w" "$i" "$f" || true ;;
					esac
					record "$lib" "tcp$lay" $((H * L)) "$bytes" "$f" || true
				done
			done
		done
		layout_down
		trap - EXIT INT TERM
	done
}

# Layout table: per layout and size, the median time of every library and its ratio to Open MPI.
report_layout() {
	local lay n bytes lib libs t ot
	libs=""
	[ "$OMPI" = 1 ] && libs="ompi"
	[ "$OMPI" = 1 ] && [ "$HAN" = 1 ] && libs="$libs ompi-han"
	for a in $CCOM_ALGOS; do libs="$libs ccom-$a"; done
	echo
	echo "# H hosts (namespaces) x L ranks: median of $REPS interleaved runs, time in us (out-of-place);"
	echo "# (r) = time / Open MPI's time (lower is better)"
	printf '%-6s %10s' layout size
	for lib in $libs; do printf ' | %10s %6s' "$lib" "(r)"; done
	echo
	for lay in $LAYOUTS; do
		n=$(( ${lay%x*} * ${lay#*x} ))
		for bytes in $(awk -F'\t' -v m="tcp$lay" '$1 == m { print $4 }' "$RES" | sort -un); do
			ot=$(value "tcp$lay" ompi "$n" "$bytes" 5)
			printf '%-6s %10s' "$lay" "$bytes"
			for lib in $libs; do
				t=$(value "tcp$lay" "$lib" "$n" "$bytes" 5)
				printf ' | %10s %6s' "$t" "$(ratio "$t" "$ot")"
			done
			echo
		done
	done
	echo "# raw results: $RES"
	[ "$TUNE_LOG" = 1 ] || return 0
	for lay in $LAYOUTS; do
		echo "# tuner's choices, $lay, rank 0 (first use of each):"
		cat "$OUT/tcp$lay-ccom-auto-"*"-rep1.txt" 2>/dev/null |
			sed -n 's/.*rank 0: \(.* -> .*\)/#   \1/p' | sort -u
	done
}

# ---------------------------------------------------------------- report

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

value() {	# mode lib n bytes column(5=time 6=busbw)
	awk -F'\t' -v m="$1" -v l="$2" -v n="$3" -v b="$4" -v c="$5" \
		'$1 == m && $2 == l && $3 == n && $4 == b { print $c }' "$RES" | median
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

report() {
	local mode n bytes ot ct ob cb mt mb
	echo
	echo "# median of $REPS alternating runs; time in us, busbw in GB/s (out-of-place)"
	echo "# time ratio = ccom/OMPI (lower is better), busbw ratio = ccom/OMPI (higher is better)"
	printf '%-4s %5s %10s | %11s %11s %7s | %8s %8s %7s' mode ranks size "OMPI us" "ccom us" \
		"t ratio" "OMPI bw" "ccom bw" "bw rat"
	[ "$MPICH" = 1 ] && printf ' | %11s %8s' "MPICH us" "MPICH bw"
	[ "$GLOO" = 1 ] && printf ' | %11s %8s' "Gloo us" "Gloo bw"
	[ -n "$BASE" ] && printf ' | %11s %8s %7s' "base us" "base bw" "t/base"
	[ "$BOUND" = 1 ] && printf ' | %11s %8s %7s %7s' "bound us" "bound bw" "ccom/b" "OMPI/b"
	echo
	for mode in shm tcp; do
		for n in $(awk -F'\t' -v m="$mode" '$1 == m { print $3 }' "$RES" | sort -un); do
			for bytes in $(awk -F'\t' -v m="$mode" -v n="$n" '$1 == m && $3 == n { print $4 }' "$RES" | sort -un); do
				ot=$(value "$mode" ompi "$n" "$bytes" 5); ct=$(value "$mode" ccom "$n" "$bytes" 5)
				ob=$(value "$mode" ompi "$n" "$bytes" 6); cb=$(value "$mode" ccom "$n" "$bytes" 6)
				printf '%-4s %5s %10s | %11s %11s %7s | %8s %8s %7s' "$mode" "$n" "$bytes" \
					"$ot" "$ct" "$(ratio "$ct" "$ot")" "$ob" "$cb" "$(ratio "$cb" "$ob")"
				if [ "$MPICH" = 1 ]; then
					mt=$(value "$mode" mpich "$n" "$bytes" 5); mb=$(value "$mode" mpich "$n" "$bytes" 6)
					printf ' | %11s %8s' "$mt" "$mb"
				fi
				if [ "$GLOO" = 1 ]; then
					mt=$(value "$mode" gloo "$n" "$bytes" 5); mb=$(value "$mode" gloo "$n" "$bytes" 6)
					printf ' | %11s %8s' "$mt" "$mb"
				fi
				if [ -n "$BASE" ]; then
					mt=$(value "$mode" base "$n" "$bytes" 5); mb=$(value "$mode" base "$n" "$bytes" 6)
					printf ' | %11s %8s %7s' "$mt" "$mb" "$(ratio "$ct" "$mt")"
				fi
				if [ "$BOUND" = 1 ] && [ "$mode" = tcp ]; then
					mt=$(value "$mode" bound "$n" "$bytes" 5); mb=$(value "$mode" bound "$n" "$bytes" 6)
					printf ' | %11s %8s %7s %7s' "$mt" "$mb" "$(ratio "$cb" "$mb")" "$(ratio "$ob" "$mb")"
				fi
				echo
			done
		done
	done
	echo "# raw results: $RES"
}

install_mpi
build
log "results in $OUT"
case $MODE in
shm) bench_shm ;;
tcp) if [ -n "$LAYOUTS" ]; then bench_layout; else bench_tcp; fi ;;
all) bench_shm; if [ -n "$LAYOUTS" ]; then bench_layout; else bench_tcp; fi ;;
esac
{
	[ -z "$LAYOUTS" ] || [ "$MODE" = all ] && report
	[ -z "$LAYOUTS" ] || report_layout
} | tee "$OUT/table.txt"
