package mentropy

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// runAnalysis feeds the records of m to a mentropy accumulator as the
// engine does (two passes, in batches of 7) and returns its result.
func runAnalysis(t *testing.T, m *trace.Memory, p *Params) *Result {
	t.Helper()
	a, err := newAnalysis(&engine.Trace{Name: "m", Header: &m.H}, p)
	if err != nil {
		t.Fatal(err)
	}
	for {
		recs := m.Records
		for len(recs) > 0 {
			n := min(7, len(recs))
			if err := a.Add(recs[:n]); err != nil {
				t.Fatal(err)
			}
			recs = recs[n:]
		}
		again, err := a.Again()
		if err != nil {
			t.Fatal(err)
		}
		if !again {
			break
		}
	}
	r, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r.(*Result)
}

// buckets sums a series into at most n points, as Proc documents them.
func buckets(s *ProcSeries, n int) (idx []int, ts []int64, mx, mean []float64) {
	e := len(s.Steps)
	n = min(n, e)
	for b := range n {
		lo, hi := b*e/n, (b+1)*e/n
		m, sum := s.Steps[lo].H, 0.0
		for _, st := range s.Steps[lo:hi] {
			m = max(m, st.H)
			sum += st.H
		}
		idx, ts, mx, mean = append(idx, lo), append(ts, s.T[lo]), append(mx, m), append(mean, sum/float64(hi-lo))
	}
	return
}

// TestAnalysisMatchesSeries checks the engine's accumulator against the
// series computed in memory (FromTrace), with every event kept (steps,
// windows, phases) and summed into points, over named events and states.
func TestAnalysisMatchesSeries(t *testing.T) {
	m := twoProcTrace()
	// A second process of events, interleaved with the first's.
	for i, e := range []int32{11, 12, 12, 13, 11, 12} {
		_ = m.Add(trace.Event(0, 2, int64(i*15), e, 0))
	}
	m.Sort()
	for _, c := range []struct {
		of    Of
		prob  string
		procs int
	}{{OfEvents, "", 2}, {OfStates, "", 1}, {OfStates, "A=0.25,B=0.75", 1}} {
		ps := ProbSpec{}
		if c.prob != "" {
			ps = ProbSpec{Mode: Given, Table: map[string]float64{"A": 0.25, "B": 0.75}}
		}
		want, err := FromTrace(context.Background(), &m.H, m.Reader(), c.of, Table4(), ps)
		if err != nil {
			t.Fatal(err)
		}
		for _, points := range []int{0, 7, 2000} {
			p := DefaultParams()
			p.Of, p.Prob, p.MaxPoints, p.PhaseThreshold = string(c.of), c.prob, points, 0.1
			got := runAnalysis(t, m, p)
			if len(got.Procs) != len(want) || len(want) != c.procs {
				t.Fatalf("%s: %d processes, want %d", c.of, len(got.Procs), len(want))
			}
			for k := range want {
				g, w := &got.Procs[k], &want[k]
				if g.Run != w.Run || g.Proc != w.Proc || g.Events != len(w.Steps) || !reflect.DeepEqual(g.Alphabet, w.Alphabet.Names()) {
					t.Errorf("%s %d points: process %+v", c.of, points, g)
				}
				n := points
				if n == 0 {
					n = len(w.Steps)
				}
				idx, ts, mx, mean := buckets(w, n)
				if !reflect.DeepEqual(g.Index, idx) || !reflect.DeepEqual(g.TNS, ts) || !reflect.DeepEqual(g.HMax, mx) || !reflect.DeepEqual(g.HMean, mean) {
					t.Errorf("%s %d points: %v %v %v\nwant %v %v %v", c.of, points, g.Index, g.HMax, g.HMean, idx, mx, mean)
				}
				if ph := Phases(w, 0.1, 3); !reflect.DeepEqual(g.Phases, ph) || len(ph) == 0 {
					t.Errorf("%s: phases %+v, want %+v", c.of, g.Phases, ph)
				}
				if points != 0 {
					if g.Steps != nil {
						t.Errorf("%s %d points: steps kept", c.of, points)
					}
					continue
				}
				for i, st := range g.Steps {
					if st.Step != w.Steps[i] || st.Window != w.Window(i) || st.Event != w.Alphabet.Names()[w.Events[i]] {
						t.Fatalf("%s event %d: %+v, want %+v %q", c.of, i, st, w.Steps[i], w.Window(i))
					}
				}
			}
		}
	}
}

// TestAnalysisMerge checks that accumulators of different processes
// merge into the whole trace's result, that the counting passes of one
// process's time shards merge, and that the stepping passes refuse to.
func TestAnalysisMerge(t *testing.T) {
	m := twoProcTrace()
	for i := range m.Records {
		if m.Records[i].Kind == trace.KindState {
			// Process 1's states become events: two processes of events.
			m.Records[i].Kind, m.Records[i].ID = trace.KindEvent, 10+m.Records[i].ID
		}
	}
	m.Sort()
	p := DefaultParams()
	whole := runAnalysis(t, m, p)
	if len(whole.Procs) != 2 {
		t.Fatalf("%d processes", len(whole.Procs))
	}
	mk := func() *analysis {
		a, err := newAnalysis(&engine.Trace{Header: &m.H}, p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := mk(), mk()
	var r0, r1 []trace.Record
	for _, r := range m.Records {
		if r.Proc == 0 {
			r0 = append(r0, r)
		} else {
			r1 = append(r1, r)
		}
	}
	for pass := 0; pass < 2; pass++ {
		if err := a.Add(r1); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(r0); err != nil {
			t.Fatal(err)
		}
		if pass == 0 {
			if err := a.Merge(b); err != nil {
				t.Fatal(err)
			}
			b = a
			if again, err := a.Again(); err != nil || !again {
				t.Fatalf("again %v %v", again, err)
			}
		}
	}
	if _, err := a.Again(); err != nil {
		t.Fatal(err)
	}
	got, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, whole) {
		t.Errorf("merged by process:\n%+v\nwant\n%+v", got, whole)
	}

	// One process cut in two time shards: the counts merge, the steps do not.
	x, y := mk(), mk()
	half := len(r0) / 2
	if err := x.Add(r0[:half]); err != nil {
		t.Fatal(err)
	}
	if err := y.Add(r0[half:]); err != nil {
		t.Fatal(err)
	}
	if err := x.Merge(y); err != nil {
		t.Fatal(err)
	}
	if e := x.procs[procKey{0, 0}].out.Events; e != 104 {
		t.Errorf("merged counts: %d events, want 104", e)
	}
	x2, y2 := mk(), mk()
	for _, acc := range []*analysis{x2, y2} {
		if err := acc.Add(r0); err != nil {
			t.Fatal(err)
		}
		if _, err := acc.Again(); err != nil {
			t.Fatal(err)
		}
	}
	if err := x2.Merge(y2); err == nil || !strings.Contains(err.Error(), "shard by process") {
		t.Errorf("merging the steps of one process: %v", err)
	}
	if err := x2.Merge(mk()); err == nil {
		t.Error("merging accumulators of different passes accepted")
	}
}

// TestParams checks the options' refusals: each names what is wrong.
func TestParams(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Params)
		want string
	}{
		{func(p *Params) { p.WindowEvents = 3 }, "the default tables are Table 4's"},
		{func(p *Params) { p.Variant = "W" }, "--alpha and --beta are needed"},
		{func(p *Params) { p.Variant = "Q" }, `unknown variant "Q"`},
		{func(p *Params) { p.K = 0 }, "K = 0"},
		{func(p *Params) { p.Of = "calls" }, `unknown stream "calls"`},
		{func(p *Params) { p.Prob, p.Learned = "A=1", true }, "exclude each other"},
		{func(p *Params) { p.Prob = "A" }, "expected NAME=VALUE"},
		{func(p *Params) { p.MaxPoints = -1 }, "must not be negative"},
		{func(p *Params) { p.Alpha = []float64{0.5, 0.7, 0.8, 0.9, 1} }, "alpha[4] = 1"},
	} {
		p := DefaultParams()
		tc.set(p)
		if _, _, _, err := p.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", p, err, tc.want)
		}
		if _, err := newAnalysis(&engine.Trace{Header: &trace.Header{}}, p); err == nil {
			t.Errorf("%+v: accumulator made", p)
		}
	}
	p := DefaultParams()
	p.Variant = "W"
	p.Alpha, p.Beta = []float64{0.1, 0.3, 0.6, 0.9}, []float64{0.45, 0.35, 0.2, 0.05}
	if c, _, k, err := p.Config(); err != nil || c.Variant != VariantW || k != trace.KindEvent {
		t.Errorf("variant W with its tables: %+v %v %v", c, k, err)
	}
	// The defaults are Table 4's, and the instrument library's table.
	d := DefaultParams()
	if d.WindowEvents != 4 || !reflect.DeepEqual(d.Alpha, []float64{0.5, 0.7, 0.8, 0.9, 0.99}) || !reflect.DeepEqual(d.Beta, []float64{0.5, 0.3, 0.2, 0.1, 0.01}) || d.K != 1 {
		t.Errorf("defaults %+v", d)
	}
	d.Alpha[0] = 0.1
	if Table4().Alpha[0] != 0.5 || DefaultParams().Alpha[0] != 0.5 {
		t.Error("the defaults share their tables")
	}
}

// TestStreamResult: Table 4's slave stream through StreamResult, the
// paper's values, and an empty stream refused.
func TestStreamResult(t *testing.T) {
	stream := strings.Fields("prog_st recv1 " + strings.Repeat("do_calc ", 100) + "send_res prog_sp")
	p := DefaultParams()
	p.K = 100
	r, err := StreamResult(stream, p)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Procs[0]
	if s.Events != 104 || len(s.Steps) != 104 || fmt6(s.Steps[3].H) != "0.499345" || fmt6(s.Steps[103].H) != "6.931472" || s.TNS[103] != 103 {
		t.Errorf("stream: %d events, H %v", s.Events, s.HMax[:4])
	}
	if _, err := StreamResult(nil, p); err == nil || !strings.Contains(err.Error(), "alphabet of 0 events") {
		t.Errorf("empty stream: %v", err)
	}
}
