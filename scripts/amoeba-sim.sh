#!/usr/bin/env bash
# Table 3 and Figure 8 of Gomez, Cai & Schubert 2017 on the amoeba workload
# (examples/amoeba: 17 processes, 16 dimensions, 20 iterations) run on the
# simulated clock of instrument.SimClock, a cluster of one core per process
# (issue 22 item 4). For every seed and mode (mpi, sos, none) it records a
# run, reads `parscope entropy --json` and `parscope pca --json`, and writes
# a Markdown page of the results: per seed, the entropies and the ordering
# mpi < sos < none, then mean ± sd per mode, PCA variance and V-shape counts.
#
#   scripts/amoeba-sim.sh [SEEDS] [OUT]      (default: 10, docs/entropy-simulated.md)
#
# The simulated runs are deterministic: the page depends only on the code
# and the model, and a second run rewrites it byte for byte (CHECK=1 runs the
# whole thing twice and compares). Each trace's records are fingerprinted
# (sha256 of `parscope export --format csv --table states`, and of the
# messages table) so the page also says the traces themselves repeat.
#
# CLOCK=wall runs the same commands on the wall clock (17 goroutines on this
# machine's cores) and writes OUT (default docs/entropy-wall-runs.md) with
# the same tables: measured, so not reproducible to the digit.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-10}
clock=${CLOCK:-sim}
case $clock in
sim) out=${2:-docs/entropy-simulated.md} ;;
wall) out=${2:-docs/entropy-wall-runs.md} ;;
*) echo "CLOCK=$clock: want sim or wall" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/parscope" ./cmd/parscope
go build -o "$tmp/amoeba" ./examples/amoeba
modes="mpi sos none"

# run MODE SEED: record one run and print one line of results:
# mode seed states classes hist empirical comb pc1 pc2 pc3 vshapes fp_states fp_messages hist_time_weighted
run() {
	local m=$1 s=$2 pst=$tmp/$1-$2.pst
	"$tmp/amoeba" -clock "$clock" -mode "$m" -seed "$s" -entropy-filter=false -force -o "$pst" 2>/dev/null
	local e p fs fm w
	e=$("$tmp/parscope" entropy --json "$pst" | jq -r '.result.runs[0] | "\(.rows) \(.distinct_classes) \(.histogram_entropy_mean) \(.empirical_entropy) \(.comb_entropy_distinct)"')
	p=$("$tmp/parscope" pca --json "$pst" | jq -r '.result | "\(.components[0].explained) \(.components[1].explained) \(.components[2].explained) \(.runs[0].v_shapes)"')
	fs=$("$tmp/parscope" export --format csv --table states -o - "$pst" | sha256sum | cut -c1-12)
	fm=$("$tmp/parscope" export --format csv --table messages -o - "$pst" | sha256sum | cut -c1-12)
	w=$("$tmp/parscope" entropy --time-weighted --json "$pst" | jq -r '.result.runs[0].histogram_entropy_mean')
	echo "$m $s $e $p $fs $fm $w"
}

generate() {
	local res=$1
	: >"$res"
	for s in $(seq 1 "$seeds"); do
		for m in $modes; do
			run "$m" "$s" >>"$res"
		done
	done
}

# page RESULTS: the Markdown page.
page() {
	awk -v seeds="$seeds" -v clock="$clock" '
	function sd(sum, sq, n) { return n > 1 ? sqrt((sq - sum * sum / n) / (n - 1)) : 0 }
	{
		m = $1; s = $2
		st[m, s] = $3; cl[m, s] = $4; h[m, s] = $5; em[m, s] = $6; co[m, s] = $7
		p1[m, s] = $8; p2[m, s] = $9; p3[m, s] = $10; v[m, s] = $11; fs[m, s] = $12; fm[m, s] = $13; hw[m, s] = $14
	}
	END {
		split("mpi sos none", M, " ")
		if (clock == "sim") {
			print "# Amoeba on the simulated clock: Table 3 and Figure 8 (generated)"
			print ""
			print "Written by `scripts/amoeba-sim.sh " seeds "`; do not edit by hand. Every number"
			print "below comes from deterministic runs on the simulated clock of"
			print "`instrument.SimClock` (docs/entropy.md, section \"The simulated cluster\"),"
			print "so rerunning the command rewrites this page byte for byte."
		} else {
			print "# Amoeba on the wall clock: Table 3 and Figure 8 (generated, measured)"
			print ""
			print "Written by `CLOCK=wall scripts/amoeba-sim.sh " seeds "`: the same runs and tables as"
			print "docs/entropy-simulated.md, but timed by the wall clock of the machine that"
			print "ran them (17 goroutines sharing its cores), so a rerun gives other digits."
		}
		print ""
		print "Each run: `amoeba -clock " clock " -mode MODE -seed SEED -entropy-filter=false`"
		print "(17 processes, 16 dimensions, 20 iterations, load 1000), then"
		print "`parscope entropy --json` and `parscope pca --json` on its trace."
		print ""
		print "## Histogram entropy per seed (bits, mean over states)"
		print ""
		print "Each state counts once (`parscope entropy`), or by its duration"
		print "(`parscope entropy --time-weighted`)."
		print ""
		print "| seed | mpi | sos | none | mpi < sos < none | time-weighted: mpi | sos | none | mpi < sos < none |"
		print "|---|---|---|---|---|---|---|---|---|"
		for (s = 1; s <= seeds; s++) {
			ok = (h["mpi", s] < h["sos", s] && h["sos", s] < h["none", s])
			okw = (hw["mpi", s] < hw["sos", s] && hw["sos", s] < hw["none", s])
			okh += ok; okhw += okw
			oke += (em["mpi", s] < em["sos", s] && em["sos", s] < em["none", s])
			okc += (cl["mpi", s] < cl["sos", s] && cl["sos", s] < cl["none", s])
			printf "| %d | %.4f | %.4f | %.4f | %s | %.4f | %.4f | %.4f | %s |\n", s, h["mpi", s], h["sos", s], h["none", s], ok ? "yes" : "**no**",
				hw["mpi", s], hw["sos", s], hw["none", s], okw ? "yes" : "**no**"
		}
		print ""
		printf "mpi < sos < none holds in **%d of %d** seeds by histogram entropy, in %d of %d by\n", okh, seeds, okhw, seeds
		printf "time-weighted histogram entropy, in %d of %d by empirical entropy and in %d of %d\n", oke, seeds, okc, seeds
		print "by the number of distinct state classes."
		print ""
		print "## Per mode over the seeds (mean ± sd)"
		print ""
		print "| mode | states | distinct classes | histogram entropy | time-weighted | empirical entropy | comb. entropy (distinct) |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= 3; i++) {
			m = M[i]
			split("", a); split("", q)
			for (s = 1; s <= seeds; s++) {
				a[1] += st[m, s]; q[1] += st[m, s] ^ 2
				a[2] += cl[m, s]; q[2] += cl[m, s] ^ 2
				a[3] += h[m, s]; q[3] += h[m, s] ^ 2
				a[4] += em[m, s]; q[4] += em[m, s] ^ 2
				a[5] += co[m, s]; q[5] += co[m, s] ^ 2
				a[6] += hw[m, s]; q[6] += hw[m, s] ^ 2
			}
			printf "| %s | %.1f ± %.1f | %.1f ± %.1f | %.4f ± %.4f | %.4f ± %.4f | %.3f ± %.3f | %.3g ± %.2g |\n", m,
				a[1] / seeds, sd(a[1], q[1], seeds), a[2] / seeds, sd(a[2], q[2], seeds),
				a[3] / seeds, sd(a[3], q[3], seeds), a[6] / seeds, sd(a[6], q[6], seeds),
				a[4] / seeds, sd(a[4], q[4], seeds), a[5] / seeds, sd(a[5], q[5], seeds)
		}
		print ""
		print "## PCA of the state matrix: variance and the V shapes of Figure 8"
		print ""
		print "PC1–PC3 explained variance (mean ± sd over the seeds) and the number of V"
		print "shapes of PC1 against state number (`v_shapes`: swings of at least"
		print "1.5 standard deviations of PC1, `pca.VShapeProminence`) for 20 iterations."
		print ""
		print "| mode | PC1 | PC2 | PC3 | V shapes per seed | seeds with 20 |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= 3; i++) {
			m = M[i]
			split("", a); split("", q); vs = ""; n20 = 0
			for (s = 1; s <= seeds; s++) {
				a[1] += p1[m, s]; q[1] += p1[m, s] ^ 2
				a[2] += p2[m, s]; q[2] += p2[m, s] ^ 2
				a[3] += p3[m, s]; q[3] += p3[m, s] ^ 2
				vs = vs (s > 1 ? " " : "") v[m, s]
				n20 += (v[m, s] == 20)
			}
			printf "| %s | %.1f%% ± %.1f | %.1f%% ± %.1f | %.1f%% ± %.1f | %s | %d of %d |\n", m,
				100 * a[1] / seeds, 100 * sd(a[1], q[1], seeds), 100 * a[2] / seeds, 100 * sd(a[2], q[2], seeds),
				100 * a[3] / seeds, 100 * sd(a[3], q[3], seeds), vs, n20, seeds
		}
		print ""
		print "## The traces"
		print ""
		print "States (rows of `parscope entropy`, one per distinct time), distinct"
		print "classes and the first 12 hex digits of the sha256 of the states"
		print "and messages tables (`parscope export --format csv --table states|messages -o -`)."
		print ""
		print "| seed | mode | states | classes | states sha256 | messages sha256 |"
		print "|---|---|---|---|---|---|"
		for (s = 1; s <= seeds; s++)
			for (i = 1; i <= 3; i++) {
				m = M[i]
				printf "| %d | %s | %d | %d | `%s` | `%s` |\n", s, m, st[m, s], cl[m, s], fs[m, s], fm[m, s]
			}
	}' "$1"
}

generate "$tmp/results"
page "$tmp/results" >"$tmp/page.md"
if [ "${CHECK:-0}" = 1 ]; then
	generate "$tmp/results2"
	page "$tmp/results2" >"$tmp/page2.md"
	if cmp -s "$tmp/page.md" "$tmp/page2.md"; then
		echo "CHECK: two generations are byte-identical" >&2
	else
		echo "CHECK: the two generations differ:" >&2
		diff "$tmp/page.md" "$tmp/page2.md" >&2 || true
		[ "$clock" = sim ] && exit 1
	fi
fi
mv "$tmp/page.md" "$out"
echo "wrote $out" >&2
