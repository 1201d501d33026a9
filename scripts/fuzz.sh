#!/usr/bin/env bash
# Runs every fuzz target in the main module for a fixed time each, one
# after another, and fails if any finds a failing input. Targets are found
# with `go test -list '^Fuzz'`, so new ones are picked up without editing
# this script. scripts/test.sh calls it; so can you.
#
#   FUZZTIME     time per target (default 10s; any -fuzztime value, e.g. 1m or 500x)
#   FUZZMINTIME  time to minimise a failing or new input (default 5s), so
#                that a target spends its time fuzzing
#   FUZZPKGS     packages to search (default ./...)
#   FUZZRUN      only the targets whose name matches this regexp (default all)
#
# Seed corpora live in each package's testdata/fuzz/<Target>/ and run with
# the ordinary tests too. A failing input is written there by the fuzzer:
# check it in with the fix, and it stays a regression test. What a target
# learns (its generated corpus) is kept in $(go env GOCACHE)/fuzz, so
# repeated runs on one machine start where the last one stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
mintime=${FUZZMINTIME:-5s}
pkgs=${FUZZPKGS:-./...}
only=${FUZZRUN:-.}
cache=$(go env GOCACHE)/fuzz
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

# `go test -list` prints a package's target names, then "ok  <import path>".
list=$(go test -list '^Fuzz' $pkgs)
declare -a pending=()
summary=()
failed=0
total=0
start=$SECONDS

# run_package builds the package's test binary once, with the fuzzing
# instrumentation, and runs each of its targets from the package directory
# (where testdata/ is).
run_package() {
	local path=$1 dir exe name out t0 status line
	shift
	dir=$(go list -f '{{.Dir}}' "$path")
	exe=$bin/$(echo "$path" | tr '/' '_').test
	if ! go test -c -fuzz="^($(IFS='|'; echo "$*"))\$" -o "$exe" "$path"; then
		for name in "$@"; do
			summary+=("FAIL  $path $name (does not build)")
		done
		failed=1
		return
	fi
	for name in "$@"; do
		t0=$SECONDS
		out=$bin/out.txt
		status=ok
		before=$(ls "$dir/testdata/fuzz/$name" 2>/dev/null || true)
		if ! (cd "$dir" && "$exe" -test.run=NONE -test.fuzz="^$name\$" -test.fuzztime="$fuzztime" \
			-test.fuzzminimizetime="$mintime" -test.fuzzcachedir="$cache/$path" >"$out" 2>&1); then
			# Go 1.26's fuzzing coordinator can report its own -fuzztime
			# deadline as a failure on a loaded machine (go.dev/issue/75804,
			# fixed in Go 1.27): no input is written and the only message
			# is "context deadline exceeded". That is not a finding.
			if [ "$(ls "$dir/testdata/fuzz/$name" 2>/dev/null || true)" = "$before" ] &&
				grep -qx '    context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
				status=late
			else
				status=FAIL
				failed=1
				cat "$out"
			fi
		fi
		# The last progress line says how much was done.
		line=$(grep -o 'execs: [0-9]*' "$out" | tail -1 || true)
		summary+=("$(printf '%-4s  %-44s %-22s %4ss  %s' "$status" "$path" "$name" $((SECONDS - t0)) "${line:-execs: ?}")")
		total=$((total + 1))
	done
}

pkg=""
while read -r first rest; do
	case $first in
	Fuzz*) pending+=("$first") ;;
	ok)
		pkg=$(echo "$rest" | awk '{print $1}')
		if ((${#pending[@]})) && [ -n "$(echo "${pending[*]}" | tr ' ' '\n' | grep -E "$only" || true)" ]; then
			mapfile -t names < <(echo "${pending[*]}" | tr ' ' '\n' | grep -E "$only")
			echo "== fuzz $pkg: ${names[*]}"
			run_package "$pkg" "${names[@]}"
		fi
		pending=()
		;;
	esac
done <<<"$list"

echo "== fuzz summary ($total targets, $fuzztime each, $((SECONDS - start))s in all; late: stopped by the Go 1.26 deadline race, not a finding)"
printf '%s\n' "${summary[@]}"
exit $failed
