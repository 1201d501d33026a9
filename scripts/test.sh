#!/usr/bin/env bash
# Sets up what parscope's tests need on a fresh Debian machine and runs them
# all: formatting, vet, module tidiness, and every test with the race
# detector. CI (.ci/run) calls this script; so can you.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use. Missing ones are installed when running as
# root (CI, the development machines); otherwise the script says what to install.
packages=(valgrind otf2-tools python3-sklearn mpich libmpich-dev openmpi-bin libopenmpi-dev chromium nodejs)
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

# DuckDB for node (npm @duckdb/node-api, which ships its engine in the
# package): cmd/parscope's TestPstOpensInDuckDB opens a .pst with it as
# docs/format.md shows.
duckdb_node=${XDG_CACHE_HOME:-$HOME/.cache}/parscope/duckdb-node
if [ ! -d "$duckdb_node/node_modules/@duckdb/node-api" ]; then
	# NodeSource's nodejs carries npm; Debian's does not, and then npm is
	# a package of its own.
	if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
	fi
	command -v npm >/dev/null || { echo "npm is needed to install @duckdb/node-api (sudo apt-get install -y npm)" >&2; exit 1; }
	echo "== installing @duckdb/node-api (npm) into $duckdb_node"
	npm install --prefix "$duckdb_node" --no-audit --no-fund --silent @duckdb/node-api@1.5.6-r.1 >/dev/null
fi
export PARSCOPE_DUCKDB_NODE=$duckdb_node

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

# staticcheck, pinned: `go run pkg@version` builds it in the module cache
# without touching go.mod, so neither module depends on it.
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2 # 2026.2.2
echo "== staticcheck"
go run "$staticcheck" ./...
(cd engine/beam && go run "$staticcheck" ./...)

# tidy_check fails if go mod tidy would change the module in directory $1.
tidy_check() {
	local dir=$1 tmp
	tmp=$(mktemp -d)
	cp "$dir/go.mod" "$dir/go.sum" "$tmp/"
	(cd "$dir" && go mod tidy)
	if ! cmp -s "$dir/go.mod" "$tmp/go.mod" || ! cmp -s "$dir/go.sum" "$tmp/go.sum"; then
		echo "go mod tidy changes $dir/go.mod or go.sum:"; diff "$tmp/go.mod" "$dir/go.mod" || true
		cp "$tmp/go.mod" "$tmp/go.sum" "$dir/"
		rm -rf "$tmp"
		exit 1
	fi
	rm -rf "$tmp"
}

echo "== go mod tidy"
tidy_check .
tidy_check engine/beam

echo "== go test -race"
go test -race -count=1 -timeout 30m ./...

# Every fuzz target for FUZZTIME each, after the seed corpora ran as tests
# above. 30 s a target (42 targets: about 25 minutes on 2 cores) keeps the
# whole of CI near 40 minutes of its 90; FUZZTIME=10s for a quicker local run.
echo "== fuzz"
FUZZTIME=${FUZZTIME:-30s} scripts/fuzz.sh

# engine/beam is a module of its own, so that the core never pays for the
# Beam SDK; ./... above does not enter it. Its tests run every pipeline on
# the Prism runner against the in-process engine.
echo "== engine/beam: vet and tests (Prism)"
(cd engine/beam && go vet ./... && go test -count=1 -timeout 30m ./...)
