#!/usr/bin/env bash
# Measures how much recording slows programs down (issue: "slowdown of the
# instrumented example workloads versus uninstrumented").
#
#  1. The example workloads, which call the instrument library: each run
#     with recording (-o trace.pst) against the same binary without
#     (recording disabled: the calls return at once), and under the Go
#     runtime tracer instead (-go-trace), in the same rounds.
#  2. Programs nobody here wrote, instrumented by `parscope instrument`:
#     golang.org/x/exp's shootout programs (see below). A rewritten
#     program does not link the trace store by default: recording, it
#     leaves the recording for parscope to build; the copy rewritten with
#     --build-at-exit builds the .pst itself, and is timed beside it.
#
# Runs alternate between the variants (PAIRS times) so that load changes
# hit both alike; the medians are printed. Usage: scripts/bench-slowdown.sh [PAIRS]
# EXAMPLES lists the example workloads to run (default: all five; "" for
# none). Figures mean something only on an idle machine.
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
# us VAR sets VAR to the wall clock in microseconds, from bash's
# $EPOCHREALTIME: no process is started to read it (a `date` started
# around each run added its own start-up, a few milliseconds on a busy
# machine and different each time, to every time taken).
us() { printf -v "$1" '%s' "${EPOCHREALTIME/[.,]/}"; }
# ms_since T0 T1 prints T1 - T0 (microseconds) in milliseconds.
ms_since() { local d=$(($2 - $1)); printf '%d.%03d\n' $((d / 1000)) $((d % 1000)); }

printf '%-40s %10s %10s %9s %12s %9s\n' "workload (the run itself)" "off (ms)" "on (ms)" "slowdown" "rtrace (ms)" "rtrace"
declare -A args=(
	[philosophers]="-iterations 5000"
	[amoeba]="-mode mpi -load 2000"
	[prefix]="-runs 400"
	[masterworker]="-tasks 4000"
	[transpose]="-n 256"
)
for ex in ${EXAMPLES-philosophers amoeba prefix masterworker transpose}; do
	go build -o "$tmp/$ex" "./examples/$ex"
	: > "$tmp/off"; : > "$tmp/on"; : > "$tmp/rtrace"
	: > "$tmp/total"; : > "$tmp/offtotal"; : > "$tmp/latertotal"
	for ((i = 0; i < pairs; i++)); do
		us t0
		"$tmp/$ex" ${args[$ex]} 2>&1 >/dev/null | ran_ms >> "$tmp/off"
		us t1
		ms_since "$t0" "$t1" >> "$tmp/offtotal"
		us t0
		"$tmp/$ex" ${args[$ex]} -force -o "$tmp/$ex.pst" 2>&1 >/dev/null | ran_ms >> "$tmp/on"
		us t1
		ms_since "$t0" "$t1" >> "$tmp/total"
		# Recording with the build left for parscope (PARSCOPE_BUILD=later):
		# the run itself is the same, the whole process ends sooner.
		rm -rf "$tmp/$ex-later.pst" "$tmp/$ex-later.pst.spill"
		us t0
		PARSCOPE_BUILD=later "$tmp/$ex" ${args[$ex]} -o "$tmp/$ex-later.pst" >/dev/null 2>&1
		us t1
		ms_since "$t0" "$t1" >> "$tmp/latertotal"
		# The same run under the Go runtime tracer instead (-go-trace).
		"$tmp/$ex" ${args[$ex]} -go-trace "$tmp/$ex.gotrace" 2>&1 >/dev/null | ran_ms >> "$tmp/rtrace"
	done
	off=$(median < "$tmp/off"); on=$(median < "$tmp/on"); total=$(median < "$tmp/total"); rt=$(median < "$tmp/rtrace")
	offtotal=$(median < "$tmp/offtotal"); latertotal=$(median < "$tmp/latertotal")
	printf '%-40s %10.1f %10.1f %8.1f%% %12.1f %8.1f%%   (whole process: off %s ms, the .pst written %s ms, PARSCOPE_BUILD=later %s ms)\n' "$ex ${args[$ex]}" "$off" "$on" \
		"$(echo "100*($on-$off)/$off" | bc -l)" "$rt" "$(echo "100*($rt-$off)/$off" | bc -l)" "$offtotal" "$total" "$latertotal"
done

# 2. golang.org/x/exp's shootout programs, original against their
#    `parscope instrument` copy (PARSCOPE_OUT=off, and recording with the
#    rewritten program's defaults), and against the original run under
#    runtime/trace (started by an init function added to a copy, so the
#    same program pays the Go tracer's cost; the trace is not stopped, so
#    what it wrote is not a valid trace, only its cost counts). Each round
#    runs the four variants one after the other; medians over the rounds.
#    SHOOTOUT lists the programs ("name args;name args"), to run fewer or
#    at other sizes; SHOOTOUT=long runs each for about a second (the
#    Benchmarks Game's sizes for spectral-norm and fasta, smaller ones for
#    the others), where a recording's fixed cost (starting, and writing
#    the .pst at exit: a few milliseconds) no longer dominates;
#    SHOOTOUT=none runs none of them.
#    REC_DEFAULT=0 skips recording with the default rewrite (without a
#    filter), which at the long sizes takes minutes a round.
exp=$(go mod download -json golang.org/x/exp | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
go build -o "$tmp/parscope" ./cmd/parscope
shootout=${SHOOTOUT:-"spectral-norm-parallel -n 1500;fannkuch-parallel -n 10;nbody -n 2000000;binary-tree -n 16;fasta -n 2500000;mandelbrot -n 2000"}
if [[ $shootout == long ]]; then
	shootout="spectral-norm-parallel -n 5500;fannkuch-parallel -n 11;nbody -n 15000000;binary-tree -n 17;fasta -n 25000000;mandelbrot -n 6000"
fi
rec_default=${REC_DEFAULT:-1}
printf '\n%-36s %9s %9s %9s %9s %8s %8s %8s\n' "shootout program (whole process)" "orig ms" "off ms" "rec ms" "rtrace ms" "off" "rec" "rtrace"
IFS=';' read -r -a progs <<< "$shootout"
[[ $shootout == none ]] && progs=()
for entry in "${progs[@]}"; do
	read -r prog pargs <<< "$entry"
	d="$tmp/$prog"; mkdir -p "$d/orig" "$d/rtrace"
	sed -e 's#^//go:build ignore$##' -e 's#^// +build ignore$##' "$exp/shootout/$prog.go" > "$d/orig/main.go"
	printf 'module shootout\n\ngo 1.26\n' > "$d/orig/go.mod"
	cp "$d/orig/main.go" "$d/orig/go.mod" "$d/rtrace/"
	cat > "$d/rtrace/zz_rtrace.go" <<'GO'
package main

import (
	"os"
	"runtime/trace"
)

func init() {
	f, err := os.Create(os.Getenv("RTRACE_OUT"))
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
}
GO
	(cd "$d/orig" && go build -o "$d/orig.bin" .) && (cd "$d/rtrace" && go build -o "$d/rtrace.bin" .) || { echo "$prog: build failed"; continue; }
	if ! "$tmp/parscope" instrument -o "$d/inst" "$d/orig" 2>"$d/inst.log"; then
		echo "$prog: parscope instrument failed: $(cat "$d/inst.log")"; continue
	fi
	printf 'module shootout\n\ngo 1.26\n\nrequire github.com/parscope/parscope v0.0.0\n\nreplace github.com/parscope/parscope => %s\n' "$PWD" > "$d/inst/go.mod"
	cp go.sum "$d/inst/go.sum"
	(cd "$d/inst" && GOFLAGS=-mod=mod go build -o "$d/inst.bin" .) || { echo "$prog: rewritten copy does not build"; continue; }
	# The Score-P workflow: a first recording run, a filter file suggested
	# from its trace (parscope filter suggest), and a copy rewritten with
	# it, whose filtered functions record nothing and cost nothing.
	PARSCOPE_OUT="$d/first.pst" "$d/inst.bin" $pargs >/dev/null
	"$tmp/parscope" filter suggest -q -o "$d/filter.txt" "$d/first.pst" > "$d/suggest.txt"
	if ! "$tmp/parscope" instrument --filter "$d/filter.txt" -o "$d/instf" "$d/orig" 2>"$d/instf.log"; then
		echo "$prog: parscope instrument --filter failed: $(cat "$d/instf.log")"; continue
	fi
	cp "$d/inst/go.mod" "$d/inst/go.sum" "$d/instf/"
	(cd "$d/instf" && GOFLAGS=-mod=mod go build -o "$d/instf.bin" .) || { echo "$prog: filtered copy does not build"; continue; }
	# The same filtered copy linking the store, so that it builds the .pst
	# at exit (--build-at-exit).
	if ! "$tmp/parscope" instrument --build-at-exit --filter "$d/filter.txt" -o "$d/instb" "$d/orig" 2>"$d/instb.log"; then
		echo "$prog: parscope instrument --build-at-exit failed: $(cat "$d/instb.log")"; continue
	fi
	cp "$d/inst/go.mod" "$d/inst/go.sum" "$d/instb/"
	(cd "$d/instb" && GOFLAGS=-mod=mod go build -o "$d/instb.bin" .) || { echo "$prog: --build-at-exit copy does not build"; continue; }
	for v in orig off rec rtrace offf recf recb; do : > "$d/$v.ms"; done
	for ((i = 0; i < pairs; i++)); do
		us t0; "$d/orig.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/orig.ms"
		us t0; PARSCOPE_OUT=off "$d/inst.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/off.ms"
		if [[ $rec_default == 1 ]]; then
			us t0; PARSCOPE_OUT="$d/rec.pst" "$d/inst.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/rec.ms"
		else
			echo 0 >> "$d/rec.ms"
		fi
		us t0; RTRACE_OUT="$d/rt.out" "$d/rtrace.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/rtrace.ms"
		us t0; PARSCOPE_OUT=off "$d/instf.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/offf.ms"
		us t0; PARSCOPE_OUT="$d/recf.pst" "$d/instf.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/recf.ms"
		us t0; PARSCOPE_OUT="$d/recb.pst" "$d/instb.bin" $pargs >/dev/null; us t1; ms_since "$t0" "$t1" >> "$d/recb.ms"
	done
	o=$(median < "$d/orig.ms"); f=$(median < "$d/off.ms"); r=$(median < "$d/rec.ms"); g=$(median < "$d/rtrace.ms")
	ff=$(median < "$d/offf.ms"); rf=$(median < "$d/recf.ms"); rb=$(median < "$d/recb.ms")
	pct() { echo "100*($1-$o)/$o" | bc -l; }
	if [[ $rec_default == 1 ]]; then
		printf '%-36s %9.0f %9.0f %9.0f %9.0f %7.1f%% %7.1f%% %7.1f%%\n' "$prog $pargs" "$o" "$f" "$r" "$g" "$(pct "$f")" "$(pct "$r")" "$(pct "$g")"
	else
		printf '%-36s %9.0f %9.0f %9s %9.0f %7.1f%% %8s %7.1f%%\n' "$prog $pargs" "$o" "$f" "-" "$g" "$(pct "$f")" "-" "$(pct "$g")"
	fi
	# parscope info builds a recording the program left for it first.
	if [[ -d "$d/rec.pst" || -d "$d/rec.pst.spill" ]]; then
		"$tmp/parscope" info -q "$d/rec.pst" | grep -E '^(records|dropped|meta parscope.filtered )' | sed 's/^/    /' || true
	fi
	printf '%-36s %9s %9.0f %9.0f %9s %7.1f%% %7.1f%%   (%s)\n' "  with the suggested filter" "" "$ff" "$rf" "" "$(pct "$ff")" "$(pct "$rf")" \
		"$(grep -E '^(exclude|coarse) ' "$d/filter.txt" | sed 's/ *#.*//' | paste -sd ';' - | sed 's/;/; /g')"
	printf '%-36s %9s %9s %9.0f %9s %7s %7.1f%%\n' "  ... and --build-at-exit" "" "" "$rb" "" "" "$(pct "$rb")"
	if [[ -d "$d/recf.pst" || -d "$d/recf.pst.spill" ]]; then
		"$tmp/parscope" info -q "$d/recf.pst" | grep -E '^(records|dropped)' | sed 's/^/    /' || true
	fi
done

# rewrite DIR MODULE builds the program in DIR/orig (its main.go) as module
# MODULE into DIR/orig.bin, its `parscope instrument` copy (DIR/inst,
# built against this checkout) into DIR/inst.bin, and the copy rewritten
# with --build-at-exit (DIR/instb: it links the trace store and builds the
# .pst at exit) into DIR/instb.bin.
rewrite() {
	local d=$1 mod=$2
	printf 'module %s\n\ngo 1.26\n' "$mod" > "$d/orig/go.mod"
	(cd "$d/orig" && go build -o "$d/orig.bin" .)
	"$tmp/parscope" instrument -o "$d/inst" "$d/orig" 2>/dev/null
	"$tmp/parscope" instrument --build-at-exit -o "$d/instb" "$d/orig" 2>/dev/null
	printf 'module %s\n\ngo 1.26\n\nrequire github.com/parscope/parscope v0.0.0\n\nreplace github.com/parscope/parscope => %s\n' "$mod" "$PWD" > "$d/inst/go.mod"
	cp go.sum "$d/inst/go.sum"
	cp "$d/inst/go.mod" "$d/inst/go.sum" "$d/instb/"
	(cd "$d/inst" && GOFLAGS=-mod=mod go build -o "$d/inst.bin" .)
	(cd "$d/instb" && GOFLAGS=-mod=mod go build -o "$d/instb.bin" .)
}

# 3. The fixed cost of a recording run, on a program that does nothing but
#    print a line (HELLO=0 skips it): the original, its rewritten copy with
#    recording off (a larger binary: the recorder is linked in), recording
#    (starting the recorder, and leaving its four records in the spill
#    directory at exit), and the copy rewritten with --build-at-exit
#    recording (the trace store linked in too, and the .pst written at
#    exit). Whole processes, ROUNDS rounds alternating the four (default
#    21).
if [[ ${HELLO:-1} == 1 ]]; then
	d="$tmp/hello"; mkdir -p "$d/orig"
	printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' > "$d/orig/main.go"
	rewrite "$d" hello
	for v in orig off rec atexit; do : > "$d/$v.us"; done
	for ((i = 0; i < ${ROUNDS:-21}; i++)); do
		us t0; "$d/orig.bin" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/orig.us"
		us t0; PARSCOPE_OUT=off "$d/inst.bin" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/off.us"
		us t0; PARSCOPE_OUT="$d/rec.pst" "$d/inst.bin" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/rec.us"
		us t0; PARSCOPE_OUT="$d/atexit.pst" "$d/instb.bin" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/atexit.us"
	done
	printf '\n%-36s %9s %9s %9s %14s\n' "fixed cost (whole process, ms)" "orig" "off" "rec" "build-at-exit"
	printf '%-36s %9.1f %9.1f %9.1f %14.1f\n' "hello world, $(ls -1 "$d/atexit.pst" | wc -l) files in its .pst" \
		"$(median < "$d/orig.us" | awk '{print $1/1000}')" "$(median < "$d/off.us" | awk '{print $1/1000}')" "$(median < "$d/rec.us" | awk '{print $1/1000}')" "$(median < "$d/atexit.us" | awk '{print $1/1000}')"
	printf '%-36s %9.1f %9.1f %9s %14.1f\n' "  binary size (MB)" "$(stat -c %s "$d/orig.bin" | awk '{print $1/1e6}')" "$(stat -c %s "$d/inst.bin" | awk '{print $1/1e6}')" "" "$(stat -c %s "$d/instb.bin" | awk '{print $1/1e6}')"
fi

# 4. Many short-lived goroutines, as a service that starts one per task
#    or request (GOROUTINES=0 skips it): a program that starts each count
#    of GOROUTINES goroutines (default "2000 20000"), each summing 2,000
#    squares and adding its sum under a mutex. The original, its
#    rewritten copy with recording off, recording (a process per
#    goroutine: creating it, its blocks, Done handing them over, and the
#    spill of that many processes written at exit), and the copy rewritten
#    with --build-at-exit recording (the .pst of that many processes built
#    at exit). Whole processes, ROUNDS rounds alternating the four
#    (default 21).
if [[ ${GOROUTINES-"2000 20000"} != 0 ]]; then
	d="$tmp/goroutines"; mkdir -p "$d/orig"
	cat > "$d/orig/main.go" <<'GO'
package main

import (
	"flag"
	"fmt"
	"sync"
)

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func main() {
	g := flag.Int("g", 20000, "goroutines")
	n := flag.Int("n", 2000, "work per goroutine")
	flag.Parse()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < *g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := work(*n)
			mu.Lock()
			total += v
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Println(total)
}
GO
	rewrite "$d" goroutines
	printf '\n%-36s %9s %9s %9s %12s %9s %12s\n' "goroutines (whole process, ms)" "orig" "off" "rec" "rec µs/gor." "at exit" "at exit µs/g."
	for g in ${GOROUTINES-2000 20000}; do
		for v in orig off rec later; do : > "$d/$v.us"; done
		for ((i = 0; i < ${ROUNDS:-21}; i++)); do
			us t0; "$d/orig.bin" -g "$g" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/orig.us"
			us t0; PARSCOPE_OUT=off "$d/inst.bin" -g "$g" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/off.us"
			us t0; PARSCOPE_OUT="$d/rec.pst" "$d/inst.bin" -g "$g" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/rec.us"
			us t0; PARSCOPE_OUT="$d/atexit.pst" "$d/instb.bin" -g "$g" >/dev/null; us t1; echo $((t1 - t0)) >> "$d/later.us"
		done
		o=$(median < "$d/orig.us"); f=$(median < "$d/off.us"); r=$(median < "$d/rec.us"); l=$(median < "$d/later.us")
		printf '%-36s %9.1f %9.1f %9.1f %12.1f %9.1f %12.1f\n' "$g goroutines" "$(echo "$o/1000" | bc -l)" "$(echo "$f/1000" | bc -l)" \
			"$(echo "$r/1000" | bc -l)" "$(echo "($r-$o)/$g" | bc -l)" "$(echo "$l/1000" | bc -l)" "$(echo "($l-$o)/$g" | bc -l)"
	done
fi
