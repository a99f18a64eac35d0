#!/bin/bash
# SPDX-License-Identifier: MIT
#
# kmod-ab-vm.sh - nccom.ko of an older revision against the working tree's,
# in ONE QEMU guest (tools/vm/run --no-module): both modules are built for
# the guest's kernel and swapped with insmod/rmmod between programs, which
# alternate (old, new, old, new, ...), so that the guest's and the host's
# drifts hit both.  Each program is ccom-perf on the engine (CCOM_KDEV=1
# CCOM_KDEV_MAP=0, the library of the working tree) under
# `perf stat -e lock:contention_begin`, so the kernel's lock contention is
# counted beside the times.  Prints every program's out-of-place and
# in-place time per op and contention count, then the medians per module.
# Not a test: it prints numbers.
#
# usage: bench/kmod-ab-vm.sh --old REV [--kernel 6.12] [--colls "allgather allreduce"]
#          [--bytes 16M] [--ranks 2] [--reps 6] [--tcg single|multi] [--out DIR]
#   --old REV: a git revision whose kmod/, uapi/ and Kbuild make the "old" module
#   --tcg: tools/vm/run --tcg-thread (default multi: vCPUs run at once, as on
#          hardware, which lock contention needs; single serializes them)
#   --out: inside the tree (the guest writes there); default build/kmod-ab
# Needs `make lib perf` and /usr/bin/perf (linux-perf) on the host.
set -u
TREE=$(cd "$(dirname "$0")/.." && pwd)
old="" kernel=6.12 colls="allgather allreduce" bytes=16M ranks=2 reps=6 tcg=multi
out="$TREE/build/kmod-ab" in_guest=""
die() { echo "kmod-ab-vm: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--old) old=${2:?}; shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--colls) colls=${2:?}; shift 2 ;;
	--bytes) bytes=${2:?}; shift 2 ;;
	--ranks) ranks=${2:?}; shift 2 ;;
	--reps) reps=${2:?}; shift 2 ;;
	--tcg) tcg=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--in-guest) in_guest=1; shift ;;
	-h|--help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
done

if [ -n "$in_guest" ]; then
	# Guest side: $out holds old.ko and new.ko; results go to $out/results.txt.
	cd "$TREE" || exit 1
	ip link set lo up 2>/dev/null
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	res="$out/results.txt"
	: > "$res"
	for r in $(seq "$reps"); do
		for c in $colls; do
			for m in old new; do
				if ! insmod "$out/$m.ko" ndevs=8; then
					echo "$m $c insmod failed" >> "$res"
					continue
				fi
				line=$(perf stat -a -e lock:contention_begin -x, -o "$out/perf.txt" -- \
					env CCOM_KDEV=1 CCOM_KDEV_MAP=0 timeout 300 build/bin/ccom-perf "$c" \
					-n "$ranks" -b "$bytes" -e "$bytes" -w 4 -i 8 -c 0 2>&1 |
					awk '$1 ~ /^[0-9]+$/ && NF >= 13 { print $6, $10 }')
				cont=$(grep contention "$out/perf.txt" | cut -d, -f1)
				echo "$m $c rep $r oop_us ${line% *} ip_us ${line#* } contentions ${cont:-?}" >> "$res"
				rmmod nccom || echo "$m $c rmmod failed" >> "$res"
			done
		done
	done
	exit 0
fi

[ -n "$old" ] || die "--old REV is required"
git -C "$TREE" rev-parse --verify -q "$old^{commit}" > /dev/null || die "'$old' is not a revision here"
[ -x "$TREE/build/bin/ccom-perf" ] || die "build/bin/ccom-perf is missing: run make lib perf"
command -v perf > /dev/null || die "perf is missing: apt-get install linux-perf"
case $out in "$TREE"/*) ;; *) out="$TREE/$out" ;; esac
mkdir -p "$out" || die "cannot make $out"
rel=$("$TREE/tools/vm/run" --which-kernel --kernel "$kernel") || die "no kernel '$kernel'"
src="$out/old-src"
rm -rf "$src" && mkdir -p "$src"
git -C "$TREE" archive "$old" kmod uapi Kbuild | tar -x -C "$src" || die "cannot export $old"
make -s -C "/lib/modules/$rel/build" M="$src" modules 2>&1 | grep -v 'Skipping BTF' >&2
ko=$(find "$src" -name nccom.ko | head -n 1)
[ -n "$ko" ] || die "building $old's nccom.ko for $rel failed"
cp "$ko" "$out/old.ko"
ko=$("$TREE/tools/vm/run" --build-only --kernel "$kernel") || die "building the tree's nccom.ko for $rel failed"
cp "$ko" "$out/new.ko"
echo "# kmod-ab-vm on $rel: old = $old ($(git -C "$TREE" rev-parse --short "$old")), new = the working tree;" \
	"$colls, $bytes, $ranks ranks, $reps repetitions, TCG $tcg"
echo "# host load start $(cut -d' ' -f1-3 /proc/loadavg)"
"$TREE/tools/vm/run" --quiet --kernel "$kernel" --mem 4096 --no-module --tcg-thread "$tcg" \
	--timeout 1800 -- "$TREE/bench/kmod-ab-vm.sh" --in-guest --out "$out" --colls "$colls" \
	--bytes "$bytes" --ranks "$ranks" --reps "$reps" || die "the guest failed (tools/vm/run rc=$?)"
echo "# host load end   $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$out/results.txt"
# Medians per module and collective (ms per op), contention range.
awk '$5 == "oop_us" {
	k = $1 " " $2; n[k]++; o[k, n[k]] = $6; p[k, n[k]] = $8; c = $10 + 0
	if (!(k in lo) || c < lo[k]) lo[k] = c
	if (!(k in hi) || c > hi[k]) hi[k] = c
}
function med(a, k, m,   i, j, t, v) {
	for (i = 1; i <= m; i++) v[i] = a[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	for (k in n)
		printf "median %-16s out of place %8.2f ms, in place %8.2f ms, contentions %s-%s (%d programs)\n",
			k, med(o, k, n[k]) / 1000, med(p, k, n[k]) / 1000, lo[k], hi[k], n[k]
}' "$out/results.txt" | sort
