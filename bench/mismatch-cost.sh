#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/mismatch-cost.sh - the cost of the collective-mismatch check between
# hosts: `ccom-perf allreduce` with 2 ranks in two network namespaces joined
# by a veth pair (net_socket), CCOM_CHECK_MISMATCH=1 and =0 interleaved (the
# order flips every repetition), then the median time per size and the
# ratio on/off.  Root (ip netns).  Not part of `make check`.
#
# Usage: bench/mismatch-cost.sh [REPS] [SIZES...]   (default 9 reps, 8 and 1M)
# Environment: BUILD (default build), ITERS (default 2000 for 8 B, 50 above 64 KiB).
set -eu
REPS=${1:-9}
shift || true
SIZES=${*:-8 1M}
PERF=${BUILD:-build}/bin/ccom-perf
NS0=ccmc$$a NS1=ccmc$$b PORT=$((30000 + $$ % 20000))
RES=$(mktemp /tmp/mismatch-cost.XXXXXX)

[ -x "$PERF" ] || { echo "mismatch-cost.sh: build $PERF first (make perf)" >&2; exit 2; }
down() { ip netns del "$NS0" 2>/dev/null || true; ip netns del "$NS1" 2>/dev/null || true; }
trap down EXIT INT TERM
ip netns add "$NS0"
ip netns add "$NS1"
ip link add ccmv0 netns "$NS0" type veth peer name ccmv1 netns "$NS1"
ip -n "$NS0" addr add 10.233.0.1/24 dev ccmv0
ip -n "$NS1" addr add 10.233.0.2/24 dev ccmv1
for ns in "$NS0" "$NS1"; do ip -n "$ns" link set lo up; done
ip -n "$NS0" link set ccmv0 up
ip -n "$NS1" link set ccmv1 up

# One run: prints the time in us of size $2 with CCOM_CHECK_MISMATCH=$1.
run() {
	local chk=$1 bytes=$2 iters f pid
	iters=${ITERS:-$(numfmt --from=iec "$bytes" | awk '{ print ($1 > 65536) ? 50 : 2000 }')}
	PORT=$((PORT + 1))
	f=$(mktemp /tmp/mismatch-cost-run.XXXXXX)
	local env="CCOM_NRANKS=2 CCOM_COMM_ID=10.233.0.1:$PORT CCOM_SOCKET_IFNAME=ccmv CCOM_CHECK_MISMATCH=$chk"
	# shellcheck disable=SC2086
	ip netns exec "$NS1" env $env CCOM_RANK=1 CCOM_HOSTID="$NS1" \
		"$PERF" allreduce -b "$bytes" -e "$bytes" -d float -o sum -w 20 -i "$iters" >/dev/null 2>&1 &
	pid=$!
	# shellcheck disable=SC2086
	ip netns exec "$NS0" env $env CCOM_RANK=0 CCOM_HOSTID="$NS0" \
		"$PERF" allreduce -b "$bytes" -e "$bytes" -d float -o sum -w 20 -i "$iters" >"$f" 2>&1
	wait "$pid"
	awk -v b="$(numfmt --from=iec "$bytes")" '$1 == b && $1 !~ /^#/ { print $6; exit }' "$f"
	rm -f "$f"
}

for rep in $(seq 1 "$REPS"); do
	for bytes in $SIZES; do
		if [ $((rep % 2)) -eq 1 ]; then order="1 0"; else order="0 1"; fi
		for chk in $order; do
			printf '%s\t%s\t%s\n' "$bytes" "$chk" "$(run "$chk" "$bytes")" >>"$RES"
		done
	done
done
printf '%-8s %12s %12s %8s   (median us of %s interleaved runs)\n' size "check on" "check off" on/off "$REPS"
for bytes in $SIZES; do
	on=$(awk -v b="$bytes" '$1 == b && $2 == 1 { print $3 }' "$RES" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	off=$(awk -v b="$bytes" '$1 == b && $2 == 0 { print $3 }' "$RES" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	printf '%-8s %12s %12s %8.3f\n' "$bytes" "$on" "$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a / b }')"
done
echo "raw: $RES"
