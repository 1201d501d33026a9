#!/usr/bin/env bash
# Sets up what parscope's tests need on a fresh Debian machine and runs them
# all: formatting, vet, module tidiness, and every test with the race
# detector. CI (.ci/run) calls this script; so can you.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use. Missing ones are installed when running as
# root (CI, the development machines); otherwise the script says what to install.
packages=(valgrind otf2-tools python3-sklearn mpich libmpich-dev chromium)
export PARSCOPE_REQUIRE_TOOLS=1
missing=()
for p in "${packages[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
	if [ "$(id -u)" = 0 ]; then
		echo "== installing ${missing[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	else
		echo "missing Debian packages: ${missing[*]} (sudo apt-get install -y ${missing[*]})" >&2
		exit 1
	fi
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go mod tidy"
cp go.mod /tmp/parscope-go.mod.$$; cp go.sum /tmp/parscope-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/parscope-go.mod.$$ || ! cmp -s go.sum /tmp/parscope-go.sum.$$; then
	echo "go mod tidy changes go.mod/go.sum:"; diff /tmp/parscope-go.mod.$$ go.mod || true
	cp /tmp/parscope-go.mod.$$ go.mod; cp /tmp/parscope-go.sum.$$ go.sum
	rm -f /tmp/parscope-go.mod.$$ /tmp/parscope-go.sum.$$
	exit 1
fi
rm -f /tmp/parscope-go.mod.$$ /tmp/parscope-go.sum.$$

echo "== go test -race"
go test -race -count=1 -timeout 30m ./...
