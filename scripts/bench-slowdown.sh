#!/usr/bin/env bash
# Measures how much recording slows programs down (issue: "slowdown of the
# instrumented example workloads versus uninstrumented").
#
#  1. The example workloads, which call the instrument library: each run
#     with recording (-o trace.pst) against the same binary without
#     (recording disabled: the calls return at once).
#  2. A program nobody here wrote, instrumented by `parscope instrument`:
#     golang.org/x/exp's spectral-norm-parallel, original against rewritten
#     (recording, and with PARSCOPE_OUT=off).
#
# Runs alternate between the variants (PAIRS times) so that load changes
# hit both alike; the medians are printed. Usage: scripts/bench-slowdown.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# ran_ms reads an example's "ran in DURATION" line (the run, without
# writing the trace) and prints the duration in milliseconds.
ran_ms() {
	sed -n 's/.*ran in \([0-9.]*\)\([a-zµ]*\).*/\1 \2/p' | awk '{
		m = ($2 == "s") ? 1000 : ($2 == "ms") ? 1 : ($2 == "µs") ? 0.001 : ($2 == "m") ? 60000 : 0.000001
		printf "%.3f\n", $1 * m }'
}
# now_ms prints the monotonic-enough wall clock in milliseconds.
now_ms() { date +%s%3N; }

printf '%-40s %10s %10s %9s\n' "workload (the run itself)" "off (ms)" "on (ms)" "slowdown"
declare -A args=(
	[philosophers]="-iterations 5000"
	[amoeba]="-mode mpi -load 2000"
	[prefix]="-runs 400"
	[masterworker]="-tasks 4000"
	[transpose]="-n 256"
)
for ex in philosophers amoeba prefix masterworker transpose; do
	go build -o "$tmp/$ex" "./examples/$ex"
	: > "$tmp/off"; : > "$tmp/on"
	: > "$tmp/total"
	for ((i = 0; i < pairs; i++)); do
		"$tmp/$ex" ${args[$ex]} 2>&1 >/dev/null | ran_ms >> "$tmp/off"
		t0=$(now_ms)
		"$tmp/$ex" ${args[$ex]} -force -o "$tmp/$ex.pst" 2>&1 >/dev/null | ran_ms >> "$tmp/on"
		t1=$(now_ms)
		echo $((t1 - t0)) >> "$tmp/total"
	done
	off=$(median < "$tmp/off"); on=$(median < "$tmp/on"); total=$(median < "$tmp/total")
	printf '%-40s %10.0f %10.0f %8.1f%%   (whole process with the .pst written: %s ms)\n' "$ex ${args[$ex]}" "$off" "$on" \
		"$(echo "100*($on-$off)/$off" | bc -l)" "$total"
done

exp=$(go list -m -f '{{.Dir}}' golang.org/x/exp)
prog=spectral-norm-parallel
mkdir -p "$tmp/orig"
sed -e 's#^//go:build ignore$##' -e 's#^// +build ignore$##' "$exp/shootout/$prog.go" > "$tmp/orig/main.go"
printf 'module shootout\n\ngo 1.26\n' > "$tmp/orig/go.mod"
(cd "$tmp/orig" && go build -o "$tmp/$prog" .)
go build -o "$tmp/parscope" ./cmd/parscope
"$tmp/parscope" instrument -o "$tmp/inst" "$tmp/orig" >/dev/null
printf 'module shootout\n\ngo 1.26\n\nrequire github.com/parscope/parscope v0.0.0\n\nreplace github.com/parscope/parscope => %s\n' "$PWD" > "$tmp/inst/go.mod"
(cd "$tmp/inst" && GOFLAGS=-mod=mod go build -o "$tmp/$prog-inst" .)
: > "$tmp/off"; : > "$tmp/on"; : > "$tmp/rec"
for ((i = 0; i < pairs; i++)); do
	t0=$(now_ms); "$tmp/$prog" -n 600 >/dev/null; t1=$(now_ms); echo $((t1 - t0)) >> "$tmp/off"
	t0=$(now_ms); PARSCOPE_OUT=off "$tmp/$prog-inst" -n 600 >/dev/null; t1=$(now_ms); echo $((t1 - t0)) >> "$tmp/on"
	t0=$(now_ms); PARSCOPE_OUT="$tmp/sn.pst" "$tmp/$prog-inst" -n 600 >/dev/null; t1=$(now_ms); echo $((t1 - t0)) >> "$tmp/rec"
done
off=$(median < "$tmp/off"); on=$(median < "$tmp/on"); rec=$(median < "$tmp/rec")
printf '%-40s %10s %10s %8.1f%%\n' "$prog -n 600 (rewritten, PARSCOPE_OUT=off)" "$off" "$on" "$(echo "100*($on-$off)/$off" | bc -l)"
printf '%-40s %10s %10s %8.1f%%\n' "$prog -n 600 (rewritten, recording)" "$off" "$rec" "$(echo "100*($rec-$off)/$off" | bc -l)"
"$tmp/parscope" info "$tmp/sn.pst" | head -5
