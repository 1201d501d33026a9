package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/counters"
	"github.com/parscope/parscope/analysis/critpath"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// writeMixedStore writes two runs mixing states, regions, messages,
// events and counters (trace/tracetest), the second with processes that
// enter their first state late, after other records.
func writeMixedStore(t *testing.T) string {
	t.Helper()
	h := &trace.Header{}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id, Name: "s" + strconv.Itoa(int(id))})
	}
	var all []trace.Record
	for run := range int32(2) {
		recs, err := trace.ReadAll(&tracetest.Stream{Procs: 6, Limit: 20_000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Run = run
			// Run 1: process 5 records no state before 5 µs.
			if run == 1 && r.Kind == trace.KindState && r.Proc == 5 && r.T < 5000 {
				continue
			}
			all = append(all, r)
		}
	}
	path := filepath.Join(t.TempDir(), "mixed.pst")
	storetest.Create(t, path, h, all)
	return path
}

// canonical decodes a JSON document and encodes it again (keys sorted,
// numbers as decoded), so that two faces' outputs compare byte for byte.
func canonical(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %.200s", err, data)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// faceCase is one analysis that runs through the engine, as the
// consistency test drives its faces.
type faceCase struct {
	name string
	// section is the report's envelope of the analysis (nil when skipped).
	section func(*report.Bundle) *engine.Envelope
	// args are the command's flags that give it the options env names.
	args func(env *engine.Envelope) []string
	// applies reports whether the analysis applies to the named trace.
	applies func(trace string) bool
	// lose keeps the records a lossy face is fed: it must lose some that
	// the analysis reads.
	lose func(*trace.Record) bool
	// extra checks more of the mixed trace's result.
	extra func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte)
}

var faceCases = []faceCase{
	{
		name:    overview.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.Overview },
		args: func(env *engine.Envelope) []string {
			return []string{"--windows", strconv.Itoa(env.Options.(*overview.Params).Windows)}
		},
		applies: func(string) bool { return true },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindEvent && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, _ []byte) {
			// info's runs are the overview's, from the manifest.
			var info struct {
				Runs    []overview.RunSummary `json:"runs"`
				Records map[string]int64      `json:"records"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
				t.Fatal(err)
			}
			ov := env.Result.(*overview.Result)
			a, _ := json.Marshal(info)
			b, _ := json.Marshal(map[string]any{"runs": ov.Summaries(), "records": ov.Records})
			if !bytes.Equal(canonical(t, a), canonical(t, b)) {
				t.Errorf("info and overview differ:\ninfo     %.400s\noverview %.400s", a, b)
			}
		},
	},
	{
		name:    occupancy.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.Occupancy },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*occupancy.Params)
			args := []string{"--top", strconv.Itoa(p.Top), "--windows", strconv.Itoa(p.Windows)}
			if p.Start != "" {
				args = append(args, "--start", p.Start)
			}
			return args
		},
		applies: func(string) bool { return true }, // otf2: states from its regions
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			if !strings.Contains(string(fromCLI), `"occupancy_ns":`) {
				t.Errorf("not occupancy's result: %.200s", fromCLI)
			}
			// Run 1's process 5 does not exist before its first state, and
			// no start mode is asked for.
			if r := env.Result.(*occupancy.Report).Runs; len(r) != 2 || r[1].AbsentNS <= 0 || r[1].StartMode != "" {
				t.Errorf("occupancy of the mixed trace: %.300s", fromCLI)
			}
			// Feeding the analysis every kind, as `parscope occupancy` did
			// before the engine, changes nothing: it reads only what it needs.
			an, _ := engine.Lookup(occupancy.Name)
			feeds := an.Feeds
			an.Feeds = func(any) []trace.Kind { return trace.Kinds[:len(trace.Kinds)-1] }
			all := runEngine(t, pst, env, nil)
			an.Feeds = feeds
			if !bytes.Equal(all, fromCLI) {
				t.Errorf("fed every kind, the analysis answers otherwise:\n%.400s\nwant\n%.400s", all, fromCLI)
			}
		},
	},
	{
		name:    state.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.States },
		args: func(env *engine.Envelope) []string {
			return []string{"--timeline-samples", strconv.Itoa(env.Options.(*state.StatesParams).TimelineSamples)}
		},
		applies: func(string) bool { return true }, // otf2: states from its regions
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// Run 1's process 5 enters its first state late: the timeline
			// shows it absent until then (it does not exist yet).
			r := env.Result.(*state.Summary).Runs
			if len(r) != 2 || r[1].Procs != 6 || r[1].Timeline == nil || r[1].Timeline.Blocks[5][0] != state.Absent || r[0].States != 794 || r[0].Timeline.Blocks[5][0] == state.Absent {
				t.Errorf("states of the mixed trace: %.300s", fromCLI)
			}
		},
	},
	{
		name:    entropy.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.Entropy },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*entropy.Params)
			return []string{"--window-ns", strconv.FormatInt(int64(p.Window), 10), "--subsets", strconv.Itoa(p.Subsets)}
		},
		applies: func(string) bool { return true }, // otf2: states from its regions
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// The report ranks the subsets and draws the series.
			e := env.Result.(*entropy.Report)
			if e.Subsets == nil || len(e.Subsets.Results) != 4 || len(e.Series) < report.EntropyWindows || e.All == nil {
				t.Errorf("entropy of the mixed trace: %.300s", fromCLI)
			}
		},
	},
	{
		name:    pca.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.PCA },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*pca.Params)
			return []string{"--components", strconv.Itoa(p.Components), "--max-points", strconv.Itoa(p.MaxPoints)}
		},
		applies: func(string) bool { return true }, // otf2: states from its regions
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// Both runs scored, each keeping at most max_points states, the
			// first and the last among them.
			p := env.Result.(*pca.Report)
			if p.Method != pca.MethodExact || p.Procs != 6 || len(p.Runs) != 2 || len(p.Components) != 3 {
				t.Fatalf("pca of the mixed trace: %.300s", fromCLI)
			}
			for _, r := range p.Runs {
				if n := len(r.Index); n == 0 || n > report.DefaultMaxPoints || r.Index[n-1] != r.States-1 || len(r.Scores[0]) != n {
					t.Errorf("run %d: %d of %d states kept", r.Run, n, r.States)
				}
			}
		},
	},
	{
		name:    phasespace.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.PhaseSpace },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*phasespace.Params)
			return []string{"--elevation", p.Elevation, "--max-points", strconv.Itoa(p.MaxPoints)}
		},
		applies: func(string) bool { return true }, // otf2: states from its regions
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// The points are those of the states PCA keeps the scores of.
			ps := env.Result.(*phasespace.Report)
			var pc struct {
				Result pca.Report `json:"result"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, "pca", "--json", pst)), &pc); err != nil {
				t.Fatal(err)
			}
			if len(ps.Runs) != 2 || len(pc.Result.Runs) != 2 {
				t.Fatalf("phasespace of the mixed trace: %.300s", fromCLI)
			}
			for i, r := range ps.Runs {
				if !slices.Equal(r.Index, pc.Result.Runs[i].Index) || r.States != pc.Result.Runs[i].States || len(r.Points) != len(r.Index) {
					t.Errorf("run %d: %d points, PCA's %d", r.Run, len(r.Index), len(pc.Result.Runs[i].Index))
				}
			}
		},
	},
	{
		name:    mentropy.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.MEntropy },
		args: func(env *engine.Envelope) []string {
			return []string{"--max-points", strconv.Itoa(env.Options.(*mentropy.Params).MaxPoints)}
		},
		applies: func(name string) bool { return name != "amoeba" },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindEvent && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// Every event of both runs, each process's series summed into
			// at most max_points points, the first event first.
			me := env.Result.(*mentropy.Result)
			var ov struct {
				Result overview.Result `json:"result"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, "overview", "--json", pst)), &ov); err != nil {
				t.Fatal(err)
			}
			events := 0
			for _, p := range me.Procs {
				events += p.Events
				if n := len(p.Index); n == 0 || n > report.DefaultMaxPoints || p.Index[0] != 0 || len(p.HMax) != n || len(p.HMean) != n || p.Steps != nil {
					t.Errorf("run %d process %d: %d points of %d events", p.Run, p.Proc, n, p.Events)
				}
			}
			if len(me.Procs) != 12 || int64(events) != ov.Result.Records["event"] || events == 0 {
				t.Errorf("mentropy of the mixed trace: %d processes, %d events (the overview counts %d): %.300s", len(me.Procs), events, ov.Result.Records["event"], fromCLI)
			}
		},
	},
	{
		name: comm.Name,
		section: func(b *report.Bundle) *engine.Envelope {
			if b.Comm == nil {
				return nil
			}
			return b.Comm.Envelope
		},
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*comm.Params)
			return []string{"--decompose", p.Decompose, "--max-side", strconv.Itoa(p.MaxSide)}
		},
		applies: func(name string) bool { return name != "amoeba" },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindSend && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			// Every run, not run 0 only: the report used to show run 0.
			rep := env.Result.(*comm.Report)
			if len(rep.Runs) != 2 {
				t.Fatalf("comm of the mixed trace: %d runs: %.300s", len(rep.Runs), fromCLI)
			}
			for i, r := range rep.Runs {
				root := r.Nodes[0].Aggregate
				if r.Run != int32(i) || r.Procs != 6 || root.Messages == 0 || r.Matched == 0 || len(r.Matrices) != len(r.Nodes) || r.Group != 1 {
					t.Errorf("run %d: %d procs, root %+v, matched %d", r.Run, r.Procs, root, r.Matched)
				}
				if b, c := r.Matrices[0].Aggregate.Totals(); b != root.Bytes || c != root.Messages {
					t.Errorf("run %d: root matrix %d bytes in %d messages, node %d in %d", r.Run, b, c, root.Bytes, root.Messages)
				}
			}
		},
	},
	{
		name:    profile.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.Profile },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*profile.Params)
			return []string{"--top", strconv.Itoa(p.Top), "--sort", p.Sort, "--max-nodes", strconv.Itoa(p.MaxNodes)}
		},
		applies: func(string) bool { return true },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindEnter && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			if r := env.Result.(*profile.Result).Runs; len(r) != 2 || len(r[0].Flat) == 0 || len(r[0].Tree) == 0 {
				t.Errorf("profile of the mixed trace: %.300s", fromCLI)
			}
		},
	},
	{
		name:    pop.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.POP },
		args: func(env *engine.Envelope) []string {
			return []string{"--runtime-regions", env.Options.(*pop.Params).RuntimeRegions}
		},
		// Only the OTF2 sample names its regions like MPI calls.
		applies: func(name string) bool { return name == "otf2" },
	},
	{
		name:    waitstate.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.WaitStates },
		args: func(env *engine.Envelope) []string {
			return []string{"--top", strconv.Itoa(env.Options.(*waitstate.Params).Top)}
		},
		applies: func(name string) bool { return name != "amoeba" && name != "go" },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindSend && r.Proc == 2 && r.T > 10_000) },
	},
	{
		name:    counters.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.Counters },
		args: func(env *engine.Envelope) []string {
			return []string{"--windows", strconv.Itoa(env.Options.(*counters.Params).Windows)}
		},
		applies: func(name string) bool { return name == "mixed" },
		lose:    func(r *trace.Record) bool { return !(r.Kind == trace.KindCounter && r.Proc == 2 && r.T > 10_000) },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			for _, r := range env.Result.(*counters.Result).Runs {
				for _, c := range r.Counters {
					var n int64
					for _, p := range c.Series {
						n += p.Samples
					}
					if c.Samples == 0 || n != c.Samples || c.Min > c.Mean || c.Mean > c.Max {
						t.Errorf("counters of the mixed trace, run %d counter %d: %.300s", r.Run, c.ID, fromCLI)
					}
				}
			}
		},
	},
	{
		name:    critpath.Name,
		section: func(b *report.Bundle) *engine.Envelope { return b.CritPath },
		args: func(env *engine.Envelope) []string {
			p := env.Options.(*critpath.Params)
			return []string{"--top", strconv.Itoa(p.Top), "--segments", strconv.Itoa(p.Segments)}
		},
		applies: func(name string) bool { return name != "amoeba" },
		// Without the last records the runs end earlier: another path.
		lose: func(r *trace.Record) bool { return r.T <= 10_000 },
		extra: func(t *testing.T, pst string, env *engine.Envelope, fromCLI []byte) {
			for _, r := range env.Result.(*critpath.Result).Runs {
				if r.LengthNS != r.EndNS-r.BeginNS || r.ComputationNS+r.CommunicationNS != r.LengthNS || len(r.Segments) == 0 {
					t.Errorf("critpath of the mixed trace, run %d: %.300s", r.Run, fromCLI)
				}
			}
		},
	},
}

// TestFacesAgree checks, for every analysis that runs through the engine,
// that `parscope NAME --json` and the report's section NAME (what
// `analyze` writes and `serve` answers) are the same JSON, byte for byte
// after loading, on traces that mix every timed record kind and on real
// traces, given the options the report's envelope names; that an analysis
// that does not apply is skipped by the report and refused by the command
// with the trace and the missing kind named; and, on the mixed trace, that
// a face fed fewer records of a kind the analysis reads is caught.
func TestFacesAgree(t *testing.T) {
	traces := map[string]string{"mixed": writeMixedStore(t), "amoeba": importAmoeba(t)}
	goPst := filepath.Join(t.TempDir(), "go.pst")
	mustRun(t, "import", "-o", goPst, realTrace(t, "go/annotations.go1.26.trace"))
	traces["go"] = goPst
	otf2 := filepath.Join(t.TempDir(), "otf2.pst")
	mustRun(t, "import", "-o", otf2, realTrace(t, "otf2/ping-pong-otf2"))
	traces["otf2"] = otf2
	ctx := context.Background()
	for name, pst := range traces {
		b, err := report.Build(ctx, pst, report.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, fc := range faceCases {
			env := fc.section(b)
			if !fc.applies(name) {
				if env != nil || b.Skipped[fc.name] == "" {
					t.Errorf("%s: %s: the report has a section or gives no reason (%q)", name, fc.name, b.Skipped[fc.name])
				}
				_, errOut, code := run(t, fc.name, "--json", pst)
				// The command refuses for want of records, or for the reason
				// the report gives (pop: no region named like MPI).
				if code == 0 || !(strings.Contains(errOut, filepath.Base(pst)+": "+fc.name+" needs ") || strings.Contains(errOut, b.Skipped[fc.name])) {
					t.Errorf("%s: %s on a trace it does not apply to: exit %d, %q", name, fc.name, code, errOut)
				}
				continue
			}
			if env == nil {
				t.Fatalf("%s: no %s section (skipped: %q)", name, fc.name, b.Skipped[fc.name])
			}
			fromReport, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{fc.name, "--json"}, fc.args(env)...), pst)
			a, c := canonical(t, fromReport), canonical(t, []byte(mustRun(t, args...)))
			if !bytes.Equal(a, c) {
				t.Errorf("%s: the report's %s and the command's differ:\nreport  %.400s\ncommand %.400s", name, fc.name, a, c)
			}
			if !strings.Contains(string(a), `"schema_version":1,`) || !strings.Contains(string(a), `"analysis":"`+fc.name+`"`) {
				t.Errorf("%s: %s: not the envelope of schema 1: %.200s", name, fc.name, a)
			}
			if name != "mixed" {
				continue
			}
			if fc.extra != nil {
				fc.extra(t, pst, env, c)
			}
			// Mutation: one face loses records; the comparison must see it.
			if lossy := runEngine(t, pst, env, fc.lose); bytes.Equal(lossy, c) {
				t.Errorf("%s: %s: a face fed fewer records went unnoticed", name, fc.name)
			}
		}
	}
}

// lossySource is a store whose records pass through a filter.
type lossySource struct {
	*store.Store
	keep func(*trace.Record) bool
}

func (l lossySource) Records(o store.ReadOptions) trace.Reader {
	return trace.Filter(l.Store.Records(o), l.keep)
}

// runEngine runs the analysis of env with its options in this process on
// the records of pst that keep keeps (all when nil) and returns its
// canonical JSON.
func runEngine(t *testing.T, pst string, env *engine.Envelope, keep func(*trace.Record) bool) []byte {
	t.Helper()
	s, err := store.Open(pst)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var src engine.Source = s
	if keep != nil {
		src = lossySource{s, keep}
	}
	res, err := engine.Run(context.Background(), src, []engine.Request{{Analysis: env.Analysis, Options: env.Options, Runs: env.Runs}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res.Envelopes[0])
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, data)
}
