#!/usr/bin/env bash
# Measures the peak resident memory and the time of importing a large gomez
# text trace (default about 2 GB), for docs/performance.md.
# Usage: scripts/bench-import-memory.sh [records] [procs]
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-150000000}
procs=${2:-64}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/parscope" ./cmd/parscope
go build -o "$dir/gengomez" ./scripts/gengomez
"$dir/gengomez" -procs "$procs" -records "$records" -o "$dir/big.srt"
echo "text trace: $(du -h "$dir/big.srt" | cut -f1), $(wc -l < "$dir/big.srt") lines"
/usr/bin/time -v "$dir/parscope" import --format gomez -o "$dir/big.pst" "$dir/big.srt" 2> "$dir/time.txt" || { cat "$dir/time.txt"; exit 1; }
grep -E "imported|Maximum resident|Elapsed \(wall|User time|System time" "$dir/time.txt"
echo ".pst size: $(du -sh "$dir/big.pst" | cut -f1)"
