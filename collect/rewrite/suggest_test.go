package rewrite

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// suggestTrace generates the trace of a rewritten program whose main
// (process 0 and 1, each) loops calling:
//
//   - hot: 20,000 calls of 100 ns, always the same path (entry, exit);
//   - (*T).m: the same, a method;
//   - branchy: 20,000 calls of 100 ns alternating two paths;
//   - slow: 20,000 calls of 50 µs, one path;
//   - rare: 100 calls of 100 ns, one path;
//   - main.func@x.go:9, a function literal, hot.
//
// Only hot and (*T).m carry little information for their cost.
func suggestTrace() (*trace.Header, []trace.Record) {
	var states []trace.StateDef
	id := int32(0)
	add := func(kind, desc string) int32 {
		states = append(states, trace.StateDef{ID: id, Name: kind, Description: desc})
		id++
		return id - 1
	}
	add("start", "process start")
	mainEntry := add("entry", "entry of main")
	loop := add("body", "body of for at x.go:5")
	litEntry := add("entry", "entry of main.func@x.go:9")
	litExit := add("exit", "exit of main.func@x.go:9")
	mainExit := add("exit", "exit of main")
	fns := map[string][3]int32{} // entry, then, exit
	for _, n := range []string{"hot", "(*T).m", "branchy", "slow", "rare"} {
		e := add("entry", "entry of "+n)
		th := add("then", "then of if at x.go:20")
		x := add("exit", "exit of "+n)
		fns[n] = [3]int32{e, th, x}
	}
	add("end", "process end")
	h := &trace.Header{States: states, Regions: []trace.RegionDef{{ID: 0, Kind: trace.RegionLoop, Label: "for at x.go:5", Function: "main", Parent: -1}}}
	var recs []trace.Record
	for proc := int32(0); proc < 2; proc++ {
		t := int64(0)
		st := func(b int32, dt int64) {
			recs = append(recs, trace.State(0, proc, t, b))
			t += dt
		}
		call := func(n string, i int, dur int64) {
			b := fns[n]
			st(b[0], dur/2)
			if n == "branchy" && i%2 == 1 {
				st(b[1], dur/2)
			} else {
				t += dur / 2
			}
			st(b[2], 10)
		}
		st(0, 10)
		st(mainEntry, 10)
		recs = append(recs, trace.Enter(0, proc, t, 0))
		for i := range 20000 {
			st(loop, 10)
			call("hot", i, 100)
			call("(*T).m", i, 100)
			call("branchy", i, 100)
			call("slow", i, 50000)
			if i < 100 {
				call("rare", i, 100)
			}
			st(litEntry, 50)
			st(litExit, 10)
		}
		recs = append(recs, trace.Exit(0, proc, t, 0))
		st(mainExit, 10)
		st(id-1, 0)
	}
	return h, recs
}

func TestSuggestExcludesHotRepetitiveFunctions(t *testing.T) {
	h, recs := suggestTrace()
	s, got := suggestByName(t, h, recs)
	want := map[string]bool{"hot": true, "(*T).m": true, "branchy": false, "slow": false, "rare": false, "main": false, "main.func@x.go:9": false}
	for n, ex := range want {
		f, ok := got[n]
		if !ok {
			t.Fatalf("%s missing from %+v", n, s.Functions)
		}
		if f.Exclude != ex {
			t.Errorf("%s: exclude %v (%s), want %v", n, f.Exclude, f.Why, ex)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d functions, want %d: %+v", len(got), len(want), s.Functions)
	}
	hot := got["hot"]
	if hot.Calls != 40000 || hot.Records != 80000 || hot.Paths != 1 || hot.MeanCallNs != 100 || hot.CostNs != 80000*DefaultRecordCostNs {
		t.Errorf("hot: %+v", hot)
	}
	// One path: the first call is a β step (0.3466 nats), then the α
	// steps fall to 0.000123 from the sixth call on; 40,000 calls on two
	// processes average 0.000148.
	if hot.Entropy > 0.00015 || hot.Entropy < 0.000145 {
		t.Errorf("hot: entropy %v a call, want about 0.000148", hot.Entropy)
	}
	if b := got["branchy"]; b.Paths != 2 || b.Records != 100000 || b.Entropy < 0.17 {
		t.Errorf("branchy: %+v", b)
	}
	if m := got["main"]; m.Calls != 2 || m.Records != 2*(2+20000)+4 {
		t.Errorf("main: %+v", m)
	}
	// By decreasing cost: slow and hot tie with (*T).m at 80,000 records
	// below branchy's 100,000.
	if s.Functions[0].Function != "branchy" {
		t.Errorf("first by cost: %s", s.Functions[0].Function)
	}

	var buf bytes.Buffer
	if err := s.WriteFilter(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	rules, err := ReadFilter(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	pats := rules.Exclude
	if len(pats) != 2 {
		t.Fatalf("patterns %q", pats)
	}
	for name, want := range map[string]bool{"hot": true, "(*T).m": true, "(xT).m": false, "(T).m": false, "branchy": false, "main": false} {
		if _, ok := excluded(pats, name); ok != want {
			t.Errorf("filter %q excludes %s: %v, want %v", pats, name, ok, want)
		}
	}
	if !strings.Contains(text, `exclude (\*T).m # 40000 calls of 100 ns`) {
		t.Errorf("filter file:\n%s", text)
	}
}

func TestSuggestThresholds(t *testing.T) {
	h, recs := suggestTrace()
	// Raising the call count above 40,000 keeps everything; a 200 ns
	// limit on calls still excludes hot.
	s, err := Suggest(context.Background(), h, trace.NewSliceReader(recs), SuggestOptions{MinCalls: 40001})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Functions {
		if f.Exclude {
			t.Errorf("%s excluded with MinCalls 40001", f.Function)
		}
	}
	s, err = Suggest(context.Background(), h, trace.NewSliceReader(recs), SuggestOptions{MaxCallNs: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Functions {
		if f.Exclude {
			t.Errorf("%s (%v ns a call) excluded with MaxCallNs 100", f.Function, f.MeanCallNs)
		}
	}
}

// suggestByName runs Suggest with the default options on the trace and
// returns the suggestion with its functions by name.
func suggestByName(t *testing.T, h *trace.Header, recs []trace.Record) (*Suggestion, map[string]FunctionCost) {
	t.Helper()
	s, err := Suggest(t.Context(), h, trace.NewSliceReader(recs), SuggestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FunctionCost{}
	for _, f := range s.Functions {
		got[f.Function] = f
	}
	return s, got
}

// TestSuggestCoarse checks the coarse rule: rare, called 200 times, whose
// then-block the recorder dropped 10^7 times (the trace's metadata, as the
// instrument library writes it), runs 50,000 block events a call and is
// made coarse; main runs 20,000 a call too but recording them costs under
// a millisecond, and the excluded functions stay excluded. The filter file says
// "coarse rare" and reads back so.
func TestSuggestCoarse(t *testing.T) {
	h, recs := suggestTrace()
	var rareThen int32 = -1
	for i, s := range h.States {
		if s.Description == "entry of rare" {
			rareThen = h.States[i+1].ID
		}
	}
	h.Meta.Extra = map[string]string{
		instrument.FilterStatsKey + fmt.Sprintf(".state.%06d", rareThen): "then of if at x.go:20: kept 100, dropped 10000000: throttled after 100000 calls",
	}
	s, got := suggestByName(t, h, recs)
	if f := got["rare"]; !f.Coarse || f.Exclude || f.Dropped != 10_000_000 || f.Calls != 200 {
		t.Errorf("rare: %+v, want coarse with 10^7 dropped over 200 calls", f)
	}
	if f := got["main"]; f.Coarse {
		t.Errorf("main made coarse: %+v (its recording costs under a millisecond)", f)
	}
	if f := got["hot"]; !f.Exclude || f.Coarse {
		t.Errorf("hot: %+v, want excluded, not coarse", f)
	}
	if s.Dropped != 10_000_000 {
		t.Errorf("Suggestion.Dropped %d, want 10^7", s.Dropped)
	}
	var buf bytes.Buffer
	if err := s.WriteFilter(&buf); err != nil {
		t.Fatal(err)
	}
	rules, err := ReadFilter(strings.NewReader(buf.String()))
	if err != nil || strings.Join(rules.Coarse, ",") != "rare" || !slices.Contains(rules.Exclude, "hot") {
		t.Errorf("filter file\n%s\nread as %+v, %v; want coarse rare, exclude hot", buf.String(), rules, err)
	}
	h.Meta.Extra[instrument.FilterStatsKey+".state.000001"] = "garbage"
	if _, err := Suggest(t.Context(), h, trace.NewSliceReader(recs), SuggestOptions{}); err == nil || !strings.Contains(err.Error(), "parscope.filtered.state.000001") {
		t.Errorf("unreadable metadata: %v, want an error naming its key", err)
	}
}

// TestSuggestThrottleRule checks TAU's throttle rule: branchy's calls
// carry too much entropy to be excluded for it, but once its entry blocks
// the recorder dropped bring it to 100,000 calls of under 10 µs it is
// excluded, and not with a higher --throttle-calls or with the rule off.
func TestSuggestThrottleRule(t *testing.T) {
	h, recs := suggestTrace()
	var entry int32 = -1
	for _, s := range h.States {
		if s.Description == "entry of branchy" {
			entry = s.ID
		}
	}
	h.Meta.Extra = map[string]string{
		instrument.FilterStatsKey + fmt.Sprintf(".state.%06d", entry): "entry of branchy: kept 40000, dropped 60000: throttled after 100000 calls",
	}
	for _, tc := range []struct {
		throttle int64
		exclude  bool
	}{{0, true}, {100_001, false}, {-1, false}} {
		s, err := Suggest(t.Context(), h, trace.NewSliceReader(recs), SuggestOptions{ThrottleCalls: tc.throttle})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Functions {
			if f.Function != "branchy" {
				continue
			}
			if f.Calls != 40_000 || f.AllCalls != 100_000 {
				t.Errorf("branchy: %d calls, %d with the dropped ones; want 40000 and 100000", f.Calls, f.AllCalls)
			}
			if f.Exclude != tc.exclude {
				t.Errorf("throttle calls %d: branchy excluded %v (%s), want %v", tc.throttle, f.Exclude, f.Why, tc.exclude)
			}
			if tc.exclude && !strings.Contains(f.Why, "TAU's throttle rule") {
				t.Errorf("why %q, want it to name TAU's throttle rule", f.Why)
			}
		}
	}
}

// TestSuggestCoarseAfterLarger checks that the coarse rule weighs a
// function against what the filtered program would still record: main's
// loop, with 60,000 of its blocks dropped by the recorder besides, is
// under 1% of the trace's events, most of them rare's, but once rare is
// coarse and hot excluded it is most of what is left, and it costs over a
// millisecond to record: it is made coarse too.
func TestSuggestCoarseAfterLarger(t *testing.T) {
	h, recs := suggestTrace()
	var rareThen, loop int32 = -1, -1
	for i, s := range h.States {
		switch s.Description {
		case "entry of rare":
			rareThen = h.States[i+1].ID
		case "body of for at x.go:5":
			loop = s.ID
		}
	}
	h.Meta.Extra = map[string]string{
		instrument.FilterStatsKey + fmt.Sprintf(".state.%06d", rareThen): "then of if at x.go:20: kept 100, dropped 10000000: throttled after 100000 calls",
		instrument.FilterStatsKey + fmt.Sprintf(".state.%06d", loop):     "body of for at x.go:5: kept 40000, dropped 60000: filter",
	}
	s, got := suggestByName(t, h, recs)
	m := got["main"]
	if share := float64(m.Records+m.Dropped) / float64(s.Records+s.Dropped); share >= 0.01 || m.CostNs < 1e6 {
		t.Fatalf("the trace is not the case tested: main has %.2f%% of the events (want under 1%%) and costs %.0f ns (want over 1 ms)", 100*share, m.CostNs)
	}
	if !m.Coarse || !got["rare"].Coarse || !got["hot"].Exclude {
		t.Errorf("main %+v, rare %+v, hot %+v: want main and rare coarse, hot excluded", m, got["rare"], got["hot"])
	}
}
