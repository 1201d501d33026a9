package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format"
	_ "github.com/parscope/parscope/format/all"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// examples are the traces of testdata/examples, imported into .pst stores
// by TestMain.
var examples = map[string]string{}

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
	// A generated stream whose windows begin with records of other kinds
	// than states (trace/tracetest).
	stream := filepath.Join(dir, "stream.pst")
	if err := writeStream(stream); err != nil {
		fmt.Fprintf(os.Stderr, "generating a stream: %v\n", err)
		os.Exit(1)
	}
	examples["stream"] = stream
	code := ptest.MainRetWithDefault(m, "prism")
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeStream(out string) error {
	w, err := store.Create(out, store.Options{})
	if err != nil {
		return err
	}
	defer w.Abort()
	h := w.Header()
	h.Meta.ClockResolution = 1
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 8}}
	for s := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: s, Name: fmt.Sprintf("S%d", s)})
	}
	for r := range int32(3) {
		h.Regions = append(h.Regions, trace.RegionDef{ID: r, Label: fmt.Sprintf("R%d", r), Parent: -1})
	}
	if err := trace.Each(&tracetest.Stream{Procs: 8, Limit: 30_000}, func(r *trace.Record) error { return w.Add(*r) }); err != nil {
		return err
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

// configs are the analyses run on every example trace, with options that
// keep the pipelines small and cut the runs into several windows.
func configs() []Config {
	table := [2][]float64{{0.5, 0.7, 0.8, 0.9, 0.99}, {0.5, 0.3, 0.2, 0.1, 0.01}}
	po := phase.DefaultOptions()
	po.MaxK = 6
	return []Config{
		{Analysis: Occupancy, Shards: 5},
		{Analysis: Occupancy, Shards: 3, Start: "B1"},
		{Analysis: Comm, Shards: 5},
		{Analysis: Comm, Comm: &comm.Params{Decompose: "binomial", UnknownCommAsWorld: true, MaxSide: 2}},
		{Analysis: EntropyHistogram, Shards: 4, Window: 20_000},
		{Analysis: PCA, Shards: 5, Components: 3},
		{Analysis: PCA, Shards: 7, TimeWeighted: true, Components: 0},
		{Analysis: States, Shards: 6},
		{Analysis: MEntropy},
		{Analysis: MEntropy, MEntropy: &mentropy.Params{Of: "states", WindowEvents: 4, K: 1, Alpha: table[0], Beta: table[1], Variant: "R", MaxPoints: 5}},
		{Analysis: MEntropy, MEntropy: &mentropy.Params{Of: "regions", WindowEvents: 4, K: 100, Alpha: table[0], Beta: table[1], Variant: "R",
			Learned: true, PhaseThreshold: 0.1, MinLow: 3}},
		{Analysis: Phases, Phase: po, Chunk: 100},
	}
}

// floatExact tells which analyses must agree bit for bit: all but PCA,
// whose covariance sums are taken in another order.
func floatExact(analysis string) bool { return analysis != PCA }

// TestAgainstInProcess runs every pipeline on Prism on every example
// trace and compares its document with the in-process engine's: equal,
// with floats within 1e-12 (relative, or absolute near 0) where the sums
// are reordered, or both an error.
func TestAgainstInProcess(t *testing.T) {
	ctx := context.Background()
	ran := map[string]int{}
	for _, name := range []string{"amoeba", "ring", "gzip", "stream", "go"} {
		for i, cfg := range configs() {
			cfg.Input = examples[name]
			cfg.Output = filepath.Join(t.TempDir(), "result.json")
			t.Run(fmt.Sprintf("%s/%d-%s", name, i, cfg.Analysis), func(t *testing.T) {
				want, werr := InProcess(ctx, cfg)
				gerr := Run(ctx, cfg, "prism", 20*time.Second)
				if werr != nil || gerr != nil {
					if werr == nil || gerr == nil {
						t.Fatalf("in-process error %v, pipeline error %v", werr, gerr)
					}
					return
				}
				got, err := os.ReadFile(cfg.Output)
				if err != nil {
					t.Fatal(err)
				}
				var w, g Document
				if err := json.Unmarshal(want, &w); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatal(err)
				}
				if len(w.Results) == 0 {
					t.Logf("no results (the trace has nothing for %s)", cfg.Analysis)
				} else {
					ran[cfg.Analysis]++
				}
				if floatExact(cfg.Analysis) {
					if string(got) != string(want) {
						t.Fatalf("pipeline document differs from the in-process one:\n%.1500s\nwant\n%.1500s", got, want)
					}
					return
				}
				var wv, gv any
				json.Unmarshal(want, &wv)
				json.Unmarshal(got, &gv)
				if path, ok := close(wv, gv, "$"); !ok {
					t.Fatalf("pipeline document differs from the in-process one at %s:\n%.1500s\nwant\n%.1500s", path, got, want)
				}
			})
		}
	}
	// Every analysis compared real results on some trace.
	for _, a := range Analyses {
		if ran[a] == 0 && !t.Failed() {
			t.Errorf("%s produced no results on any example trace", a)
		}
	}
}

// close compares two decoded JSON values, floats within 1e-12.
func close(a, b any, path string) (string, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return path, false
		}
		d := math.Abs(x - y)
		return path, d <= 1e-12*math.Max(math.Abs(x), math.Abs(y)) || d <= 1e-12
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := close(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return path, true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for k := range x {
			if p, ok := close(x[k], y[k], path+"."+k); !ok {
				return p, false
			}
		}
		return path, true
	default:
		return path, fmt.Sprint(a) == fmt.Sprint(b)
	}
}

// copyStore copies a .pst directory.
func copyStore(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
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
	err = Run(ctx, Config{Analysis: States, Input: newer, Output: out}, "prism", 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), newer) {
		t.Errorf("a version-99 .pst: error %v, want one naming the file and the version", err)
	}

	missing := copyStore(t, examples["ring"])
	for _, f := range []string{"messages.parquet", "index.parquet"} {
		if err := os.Remove(filepath.Join(missing, f)); err != nil {
			t.Fatal(err)
		}
	}
	err = Run(ctx, Config{Analysis: Comm, Input: missing, Output: out}, "prism", 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "index.parquet, messages.parquet") {
		t.Errorf("missing shards: error %v, want one naming index.parquet and messages.parquet", err)
	}

	// A Flink job server that is not there: a clear error within the
	// timeout, not a hang.
	old := *jobopts.Endpoint
	*jobopts.Endpoint = "127.0.0.1:1"
	start := time.Now()
	err = Run(ctx, Config{Analysis: States, Input: examples["amoeba"], Output: out}, "flink", 2*time.Second)
	*jobopts.Endpoint = old
	if err == nil || !strings.Contains(err.Error(), "not reachable") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable flink runner: error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("an unreachable runner took %v to report", d)
	}
	*jobopts.Endpoint = ""
	err = Run(ctx, Config{Analysis: States, Input: examples["amoeba"], Output: out}, "spark", time.Second)
	*jobopts.Endpoint = old
	if err == nil || !strings.Contains(err.Error(), "--endpoint") {
		t.Errorf("spark without an endpoint: error %v", err)
	}
	if err := Run(ctx, Config{Analysis: States, Input: examples["amoeba"], Output: out}, "dataflow", time.Second); err == nil || !strings.Contains(err.Error(), "--project") {
		t.Errorf("dataflow without a project: error %v", err)
	}
	if err := Run(ctx, Config{Analysis: States, Input: examples["amoeba"], Output: out}, "direct-to-nowhere", time.Second); err == nil || !strings.Contains(err.Error(), "unknown runner") {
		t.Errorf("an unknown runner: error %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
}

// TestMEntropyIsTheEngines checks that the mentropy pipeline, which runs
// the engine's analysis on each process's records on the workers, writes
// the processes of the result the engine computes over the whole trace
// in one run (what `parscope mentropy --json` and the report's section
// hold), on a trace of messages, states and events and on the ring; and
// that a trace without the stream's records is refused before the
// pipeline runs, as the engine refuses it.
func TestMEntropyIsTheEngines(t *testing.T) {
	ctx := context.Background()
	p := mentropy.DefaultParams()
	p.MaxPoints, p.PhaseThreshold = 3, 0.1
	for _, name := range []string{"stream", "ring"} {
		cfg := Config{Analysis: MEntropy, Input: examples[name], Output: filepath.Join(t.TempDir(), "result.json"), MEntropy: p}
		engineRes, pipe := againstEngine(t, cfg, p)
		want := engineRes.(*mentropy.Result).Procs
		a, _ := json.Marshal(want)
		if string(a) != string(pipe) || len(want) == 0 || want[0].Events == 0 || len(want[0].HMax) != 3 {
			t.Errorf("%s: the pipeline's processes differ from the engine's:\n%.600s\nwant\n%.600s", name, pipe, a)
		}
	}
	cfg := Config{Analysis: MEntropy, Input: examples["amoeba"], Output: filepath.Join(t.TempDir(), "result.json")}
	if err := Run(ctx, cfg, "prism", 20*time.Second); err == nil || !strings.Contains(err.Error(), "mentropy needs event records") {
		t.Errorf("amoeba, which has no events: error %v", err)
	}
	bad := mentropy.DefaultParams()
	bad.WindowEvents = 3
	cfg = Config{Analysis: MEntropy, Input: examples["ring"], Output: filepath.Join(t.TempDir(), "result.json"), MEntropy: bad}
	if err := Run(ctx, cfg, "prism", 20*time.Second); err == nil || !strings.Contains(err.Error(), "--alpha and --beta are needed") {
		t.Errorf("W = 3 with Table 4's tables: error %v", err)
	}
}

// TestCommIsTheEngines checks that the comm pipeline, which merges
// per-process accumulators, writes the runs of the result the engine's comm
// analysis computes in one pass (what `parscope comm --json` and the
// report's section hold), nodes in the same canonical order, on the ring
// and on a trace of messages, states and events; and that a trace without
// messages or regions is refused before the pipeline runs.
func TestCommIsTheEngines(t *testing.T) {
	ctx := context.Background()
	p := &comm.Params{Decompose: "linear", UnknownCommAsWorld: true, MaxSide: 2}
	for _, name := range []string{"ring", "stream"} {
		cfg := Config{Analysis: Comm, Input: examples[name], Output: filepath.Join(t.TempDir(), "result.json"), Comm: p}
		engineRes, pipe := againstEngine(t, cfg, p)
		want := engineRes.(*comm.Report).Runs
		a, _ := json.Marshal(want)
		if string(a) != string(pipe) || len(want) != 1 || want[0].Matched == 0 || want[0].Group != want[0].Procs/2 || len(want[0].Nodes) < 1 {
			t.Errorf("%s: the pipeline's runs differ from the engine's:\n%.600s\nwant\n%.600s", name, pipe, a)
		}
	}
	cfg := Config{Analysis: Comm, Input: examples["amoeba"], Output: filepath.Join(t.TempDir(), "result.json")}
	if err := Run(ctx, cfg, "prism", 20*time.Second); err == nil || !strings.Contains(err.Error(), "comm needs send or recv or collective or enter records") {
		t.Errorf("amoeba, which has no messages: error %v", err)
	}
}

// againstEngine runs cfg's analysis through the engine over the whole
// trace with the options opts, and its pipeline on Prism; it returns the
// engine's result and the results of the pipeline's document, as JSON.
func againstEngine(t *testing.T, cfg Config, opts any) (any, []byte) {
	t.Helper()
	ctx := context.Background()
	name, _, _ := cfg.engineOptions()
	s, err := store.Open(cfg.Input)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(ctx, s, []engine.Request{{Analysis: name, Options: opts}})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, cfg, "prism", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	pipe, err := json.Marshal(doc.Results)
	if err != nil {
		t.Fatal(err)
	}
	return res.Envelopes[0].Result, pipe
}
