package pipelines

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/format"
	_ "github.com/parscope/parscope/format/all"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// examples are the traces the pipelines are tested on, imported or
// written into .pst stores by TestMain: the examples of testdata/examples
// (amoeba: states; ring: regions, messages and collectives, no states;
// gzip: basic block vectors), a Go trace whose goroutines come and go,
// and tracetest.Mixed, with its states and without (states derived from
// its regions).
var examples = map[string]string{}

// traces are the names of examples, in the order the tests run them.
var traces = []string{"amoeba", "ring", "gzip", "go", "mixed", "mixed-regions"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parscope-beam-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root := "../../../testdata/examples/"
	for name, in := range map[string]struct {
		files []string
		dict  string
	}{
		"amoeba": {[]string{root + "amoeba.srt"}, root + "amoeba_blocks.txt"},
		"ring":   {[]string{root + "ring/ring.0.trace", root + "ring/ring.1.trace", root + "ring/ring.2.trace", root + "ring/ring.3.trace"}, ""},
		"gzip":   {[]string{root + "gzip.bb.gz"}, ""},
		// Goroutines created and ended during the run: processes absent
		// before their first state and after not-exist.
		"go": {[]string{"../../../testdata/real/traces/go/stress.go1.26.trace"}, ""},
	} {
		out := filepath.Join(dir, name+".pst")
		if err := importTrace(in.files, in.dict, out); err != nil {
			fmt.Fprintf(os.Stderr, "importing %s: %v\n", name, err)
			os.Exit(1)
		}
		examples[name] = out
	}
	for name, states := range map[string]bool{"mixed": true, "mixed-regions": false} {
		out := filepath.Join(dir, name+".pst")
		h, recs := tracetest.Mixed(3, 6, 90, states)
		if err := writeStore(out, h, recs); err != nil {
			fmt.Fprintf(os.Stderr, "writing %s: %v\n", name, err)
			os.Exit(1)
		}
		examples[name] = out
	}
	code := ptest.MainRetWithDefault(m, "prism")
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeStore(out string, h *trace.Header, recs []trace.Record) error {
	w, err := store.Create(out, store.Options{})
	if err != nil {
		return err
	}
	defer w.Abort()
	*w.Header() = *h
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			return err
		}
	}
	return w.Close()
}

func importTrace(files []string, dict, out string) error {
	imp, err := format.Detect(files[0])
	if err != nil {
		return err
	}
	w, err := store.Create(out, store.Options{})
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := imp.Import(context.Background(), files, format.Options{Dict: dict}, w); err != nil {
		return err
	}
	return w.Close()
}

// config returns the configuration of analysis with the options opts
// (nil: the defaults).
func config(tb testing.TB, analysis string, opts any) Config {
	tb.Helper()
	cfg := Config{Analysis: analysis}
	if opts != nil {
		if err := cfg.SetOptions(opts); err != nil {
			tb.Fatal(err)
		}
	}
	return cfg
}

// configs are the requests run on every example trace: every analysis
// with its defaults and with other options, some parts grouped
// (--shards), some runs and processes selected, states from elsewhere.
func configs(tb testing.TB) []Config {
	occ := occupancy.DefaultParams()
	occ.Top, occ.Windows, occ.Project, occ.Counters = 0, 16, []string{"A1"}, true
	cp := &comm.Params{Decompose: "binomial", UnknownCommAsWorld: true, MaxSide: 2}
	ent := entropy.DefaultParams()
	ent.Window = 20 * time.Microsecond // the series of the former entropy-histogram
	ent2 := entropy.DefaultParams()
	ent2.Window, ent2.Subsets, ent2.Cyclic, ent2.TimeWeighted = 50*time.Microsecond, 2, true, true
	pc := pca.DefaultParams()
	pc.Components, pc.TimeWeighted, pc.MaxPoints = 0, true, 50
	table := [2][]float64{{0.5, 0.7, 0.8, 0.9, 0.99}, {0.5, 0.3, 0.2, 0.1, 0.01}}
	me2 := &mentropy.Params{Of: "states", WindowEvents: 4, K: 1, Alpha: table[0], Beta: table[1], Variant: "R", Scope: "history", MaxPoints: 5}
	me3 := &mentropy.Params{Of: "regions", WindowEvents: 4, K: 100, Alpha: table[0], Beta: table[1], Variant: "R", Scope: "history",
		Learned: true, PhaseThreshold: 0.1, MinLow: 3}
	ph := phase.DefaultParams()
	ph.MaxK, ph.InitSeeds = 6, 3
	ph2 := phase.DefaultParams()
	ph2.Compat, ph2.MaxK, ph2.Dim = true, 4, "noProject"
	st := state.DefaultStatesParams()
	st.TimelineSamples, st.Procs = 16, []int32{2, 0, 1}

	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	return []Config{
		config(tb, occupancy.Name, nil),
		with(config(tb, occupancy.Name, occ), func(c *Config) { c.Shards, c.ExcludeProcs = 2, []int32{1} }),
		config(tb, comm.Name, nil),
		with(config(tb, comm.Name, cp), func(c *Config) { c.Shards = 3 }),
		config(tb, entropy.Name, ent),
		with(config(tb, entropy.Name, ent2), func(c *Config) { c.States = engine.StatesMPI }),
		config(tb, pca.Name, nil),
		with(config(tb, pca.Name, pc), func(c *Config) { c.Runs = []int32{0, 2} }),
		config(tb, mentropy.Name, nil),
		with(config(tb, mentropy.Name, me2), func(c *Config) { c.Shards = 4 }),
		with(config(tb, mentropy.Name, me3), func(c *Config) { c.ExcludeProcs = []int32{2} }),
		config(tb, phase.Name, ph),
		with(config(tb, phase.Name, ph2), func(c *Config) { c.Shards = 2 }),
		config(tb, state.Name, nil),
		with(config(tb, state.Name, st), func(c *Config) { c.States = engine.StatesRegions }),
	}
}

// exact tells which analyses write the CLI's bytes: all but pca, whose
// covariance sums are added run by run and then together (every number
// within 1e-12 relative then).
func exact(analysis string) bool { return analysis != pca.Name }

// compare runs cfg on Prism and through the CLI's path (InProcess:
// engine.Run and the envelope written by engine.WriteJSON) and returns
// what differs: nil when the pipeline wrote the CLI's bytes (numbers of
// pca within 1e-12), or both failed with the same message (failed, the
// CLI's error).
func compare(cfg Config) (failed, err error) {
	ctx := context.Background()
	want, werr := InProcess(ctx, cfg)
	gerr := Run(ctx, cfg, "prism", 20*time.Second)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || !strings.Contains(gerr.Error(), werr.Error()) {
			return nil, fmt.Errorf("the CLI's error %v, the pipeline's %v", werr, gerr)
		}
		return werr, nil
	}
	got, err := os.ReadFile(cfg.Output)
	if err != nil {
		return nil, err
	}
	if exact(cfg.Analysis) {
		if string(got) != string(want) {
			return nil, fmt.Errorf("the pipeline wrote\n%.1500s\nwant the CLI's\n%.1500s", got, want)
		}
		return nil, nil
	}
	if path, ok := enginetest.Within(want, got, 1e-12); !ok {
		return nil, fmt.Errorf("the pipeline's document differs from the CLI's at %s:\n%.1500s\nwant\n%.1500s", path, got, want)
	}
	return nil, nil
}

// TestAgainstInProcess runs every pipeline on Prism on every example
// trace and compares what it writes with what the CLI prints (InProcess).
// Every analysis must give a result on some trace, the state analyses
// also from states derived from regions.
func TestAgainstInProcess(t *testing.T) {
	ran := map[string]int{}
	derived := map[string]int{}
	for _, name := range traces {
		for i, cfg := range configs(t) {
			cfg.Input = examples[name]
			cfg.Output = filepath.Join(t.TempDir(), "result.json")
			t.Run(fmt.Sprintf("%s/%d-%s", name, i, cfg.Analysis), func(t *testing.T) {
				failed, err := compare(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if failed != nil {
					t.Logf("no result, as in the CLI: %v", failed)
					return
				}
				ran[cfg.Analysis]++
				if data, _ := os.ReadFile(cfg.Output); strings.Contains(string(data), `"states_from": "regions"`) {
					derived[cfg.Analysis]++
				}
			})
		}
	}
	for _, a := range Analyses {
		if ran[a] == 0 && !t.Failed() {
			t.Errorf("%s gave no result on any example trace", a)
		}
	}
	for _, a := range []string{occupancy.Name, entropy.Name, pca.Name, state.Name} {
		if derived[a] == 0 && !t.Failed() {
			t.Errorf("%s gave no result from states derived from regions", a)
		}
	}
}

// dropKind is a part of a trace without the records of one kind.
type dropKind struct {
	engine.Source
	kind trace.Kind
}

func (d dropKind) Records(o store.ReadOptions) trace.Reader {
	return &dropReader{d.Source.Records(o), d.kind}
}

func (d dropKind) BBV(o store.ReadOptions) trace.Reader {
	if d.kind == trace.KindBBV {
		return trace.NewSliceReader(nil)
	}
	return d.Source.BBV(o)
}

func (d dropKind) Whole() engine.Source        { return d.Source.(engine.Part).Whole() }
func (d dropKind) ProcSpans() []store.ProcSpan { return d.Source.(engine.Spanner).ProcSpans() }

type dropReader struct {
	trace.Reader
	kind trace.Kind
}

func (r *dropReader) Read(buf []trace.Record) (int, error) {
	for {
		n, err := r.Reader.Read(buf)
		k := 0
		for _, rec := range buf[:n] {
			if rec.Kind != r.kind {
				buf[k] = rec
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// TestFewerKindsFail checks that the comparison sees a pipeline fed fewer
// record kinds than the engine: with each kind an analysis reads
// (regions for states derived from them) left out of every part, the
// pipeline's result on the mixed traces must differ from the CLI's.
func TestFewerKindsFail(t *testing.T) {
	defer func(f func(engine.Source, part) engine.Source) { partSource = f }(partSource)
	occ := occupancy.DefaultParams()
	occ.Counters = true
	cases := []struct {
		trace string
		cfg   Config
	}{
		{"mixed", config(t, occupancy.Name, occ)},
		{"mixed", config(t, comm.Name, nil)},
		{"mixed", config(t, entropy.Name, nil)},
		{"mixed-regions", config(t, pca.Name, nil)},
		{"mixed", config(t, mentropy.Name, nil)},
		{"mixed", config(t, phase.Name, nil)},
		{"mixed-regions", config(t, state.Name, nil)},
	}
	for _, c := range cases {
		a, _ := engine.Lookup(c.cfg.Analysis)
		req, err := c.cfg.Request()
		if err != nil {
			t.Fatal(err)
		}
		opts := req.Options
		if opts == nil {
			opts = a.Options()
		}
		kinds := a.Kinds(opts)
		if c.trace == "mixed-regions" && slices.Contains(kinds, trace.KindState) {
			kinds = []trace.Kind{trace.KindEnter, trace.KindExit}
		}
		for _, k := range kinds {
			cfg := c.cfg
			cfg.Input, cfg.Output = examples[c.trace], filepath.Join(t.TempDir(), "result.json")
			partSource = func(src engine.Source, pt part) engine.Source {
				return dropKind{engine.Restrict(src, pt.Runs, pt.Procs), k}
			}
			if _, err := compare(cfg); err == nil {
				t.Errorf("%s on %s: the pipeline fed no %s records wrote the CLI's result", cfg.Analysis, c.trace, k)
			}
		}
	}
}

// copyStore copies a .pst directory.
func copyStore(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	storetest.Copy(t, from, to)
	return to
}

// TestRefusals checks that a pipeline refuses, before it runs, what the
// CLI refuses, with the CLI's message: a trace without the records an
// analysis needs, options its accumulator refuses, runs the trace lacks.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	bad := mentropy.DefaultParams()
	bad.WindowEvents = 3
	for _, c := range []struct {
		trace string
		cfg   Config
		want  string
	}{
		{"amoeba", config(t, mentropy.Name, nil), "amoeba.pst: mentropy needs event records"},
		{"ring", config(t, mentropy.Name, bad), "--alpha and --beta are needed"},
		{"amoeba", config(t, comm.Name, nil), "comm needs send or recv or collective or enter records"},
		{"amoeba", config(t, phase.Name, nil), "phases needs bbv records"},
		{"ring", Config{Analysis: state.Name, Runs: []int32{7}}, "--runs: ring.pst has no run 7"},
		{"amoeba", Config{Analysis: "entropy-histogram"}, `unknown analysis "entropy-histogram"`},
	} {
		cfg := c.cfg
		cfg.Input, cfg.Output = examples[c.trace], filepath.Join(t.TempDir(), "result.json")
		_, werr := InProcess(ctx, cfg)
		gerr := Run(ctx, cfg, "prism", 20*time.Second)
		if werr == nil || gerr == nil || gerr.Error() != werr.Error() || !strings.Contains(gerr.Error(), c.want) {
			t.Errorf("%s on %s: pipeline error %v, in-process %v, want %q", cfg.Analysis, c.trace, gerr, werr, c.want)
		}
		if _, err := os.Stat(cfg.Output); err == nil {
			t.Errorf("%s on %s: a refused pipeline wrote %s", cfg.Analysis, c.trace, cfg.Output)
		}
	}
}

// TestPlan checks how the trace is cut: by run, by process (grouped by
// --shards, never across runs), pca's randomized method whole.
func TestPlan(t *testing.T) {
	ctx := context.Background()
	plan := func(cfg Config) *plan {
		t.Helper()
		cfg.Input = examples["mixed"]
		o, err := open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := makePlan(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	if pl := plan(Config{Analysis: state.Name}); len(pl.Parts) != 3 || !pl.Ordered || pl.Rounds != 1 || !slices.Equal(pl.Parts[2].Runs, []int32{2}) || pl.Parts[2].Procs != nil {
		t.Errorf("states by run: %+v", pl)
	}
	if pl := plan(Config{Analysis: pca.Name, Runs: []int32{2, 0}, Shards: 1}); len(pl.Parts) != 1 || pl.Rounds != 2 || !slices.Equal(pl.Parts[0].Runs, []int32{0, 2}) {
		t.Errorf("pca of runs 2 and 0 in one part: %+v", pl)
	}
	if pl := plan(Config{Analysis: comm.Name, ExcludeProcs: []int32{5}}); len(pl.Parts) != 15 || pl.Ordered || !slices.Equal(pl.Parts[5].Procs, []int32{0}) {
		t.Errorf("comm by process: %+v", pl)
	}
	if pl := plan(Config{Analysis: comm.Name, Shards: 4}); len(pl.Parts) != 6 {
		t.Errorf("comm in 4 groups of 18 processes of 3 runs: %+v", pl)
	} else {
		for _, pt := range pl.Parts {
			if len(pt.Runs) != 1 {
				t.Errorf("a part across runs: %+v", pt)
			}
		}
	}
	p := pca.DefaultParams()
	p.Procs = make([]int32, pca.ExactMaxProcs+1)
	if pl := plan(config(t, pca.Name, p)); len(pl.Parts) != 1 || pl.Rounds != 1 || pl.Parts[0].Runs != nil {
		t.Errorf("randomized pca: %+v", pl)
	}
}

// TestPCAWhole checks the pipeline of pca's randomized method (more than
// pca.ExactMaxProcs processes), which runs whole on one worker.
func TestPCAWhole(t *testing.T) {
	out := filepath.Join(t.TempDir(), "big.pst")
	h, recs := tracetest.Mixed(1, pca.ExactMaxProcs+4, 4, true)
	if err := writeStore(out, h, recs); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Analysis: pca.Name, Input: out, Output: filepath.Join(t.TempDir(), "result.json")}
	failed, err := compare(cfg)
	if err != nil || failed != nil {
		t.Fatalf("%v %v", failed, err)
	}
	if data, _ := os.ReadFile(cfg.Output); !strings.Contains(string(data), `"method": "randomized"`) {
		t.Errorf("%d processes: not the randomized method", pca.ExactMaxProcs+4)
	}
}

// TestBadInput checks the refusals: a .pst of another format version,
// missing shards, an unknown or unreachable runner, nothing written.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "result.json")

	newer := copyStore(t, examples["amoeba"])
	mpath := filepath.Join(newer, "manifest.json")
	data, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"version": 1`, `"version": 99`, 1))
	if !strings.Contains(string(data), `"version": 99`) {
		t.Fatalf("the manifest has no version 1 to change: %.200s", data)
	}
	if err := os.WriteFile(mpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(ctx, Config{Analysis: state.Name, Input: newer, Output: out}, "prism", 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), newer) {
		t.Errorf("a version-99 .pst: error %v, want one naming the file and the version", err)
	}

	missing := copyStore(t, examples["ring"])
	for _, f := range []string{"messages.parquet", "index.parquet"} {
		if err := os.Remove(filepath.Join(missing, f)); err != nil {
			t.Fatal(err)
		}
	}
	err = Run(ctx, Config{Analysis: comm.Name, Input: missing, Output: out}, "prism", 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "index.parquet, messages.parquet") {
		t.Errorf("missing shards: error %v, want one naming index.parquet and messages.parquet", err)
	}

	// A Flink job server that is not there: a clear error within the
	// timeout, not a hang.
	old := *jobopts.Endpoint
	*jobopts.Endpoint = "127.0.0.1:1"
	start := time.Now()
	err = Run(ctx, Config{Analysis: state.Name, Input: examples["amoeba"], Output: out}, "flink", 2*time.Second)
	*jobopts.Endpoint = old
	if err == nil || !strings.Contains(err.Error(), "not reachable") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable flink runner: error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("an unreachable runner took %v to report", d)
	}
	*jobopts.Endpoint = ""
	err = Run(ctx, Config{Analysis: state.Name, Input: examples["amoeba"], Output: out}, "spark", time.Second)
	*jobopts.Endpoint = old
	if err == nil || !strings.Contains(err.Error(), "--endpoint") {
		t.Errorf("spark without an endpoint: error %v", err)
	}
	if err := Run(ctx, Config{Analysis: state.Name, Input: examples["amoeba"], Output: out}, "dataflow", time.Second); err == nil || !strings.Contains(err.Error(), "--project") {
		t.Errorf("dataflow without a project: error %v", err)
	}
	if err := Run(ctx, Config{Analysis: state.Name, Input: examples["amoeba"], Output: out}, "direct-to-nowhere", time.Second); err == nil || !strings.Contains(err.Error(), "unknown runner") {
		t.Errorf("an unknown runner: error %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
}
