package gotrace

import (
	"errors"
	"io"
	"os"
	"strconv"
	"testing"

	xtrace "golang.org/x/exp/trace"

	"github.com/parscope/parscope/trace"
)

// firstTransition is a goroutine's first state transition as the reader
// gives it: the state it leaves and enters, and its time from the trace's
// first event.
type firstTransition struct {
	from, to xtrace.GoState
	t        int64
}

// firstTransitions reads path with the x/exp/trace reader directly and
// returns each goroutine's first transition.
func firstTransitions(t *testing.T, path string) map[int64]firstTransition {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := xtrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]firstTransition{}
	started := false
	var t0 xtrace.Time
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !started {
			started, t0 = true, ev.Time()
		}
		if ev.Kind() != xtrace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			continue
		}
		g := int64(st.Resource.Goroutine())
		if _, ok := out[g]; ok {
			continue
		}
		from, to := st.Goroutine()
		out[g] = firstTransition{from: from, to: to, t: int64(ev.Time() - t0)}
	}
}

// TestPresentFromStart pins when a goroutine begins to exist. One that
// existed before the trace began (its first transition, from a status event
// of the first generation, leaves Undetermined) is in the state its status
// gives from the run's start, 0, even when the reader reaches its status
// late in the first generation; one created during the trace (its first
// transition leaves NotExist) has no record before its creation, so the
// analyses count it absent until then.
func TestPresentFromStart(t *testing.T) {
	for _, name := range []string{"stress.go1.26.trace", "annotations.go1.26.trace", "test-encoding-json.go1.25.trace"} {
		t.Run(name, func(t *testing.T) {
			path := realFile(t, name)
			want := firstTransitions(t, path)
			m := importFile(t, nil, path)
			first := map[int32]trace.Record{}
			for _, r := range m.Records {
				if _, ok := first[r.Proc]; !ok {
					first[r.Proc] = r
				}
			}
			ix := trace.NewIndex(&m.H)
			var before, created, late int
			for _, p := range m.H.Procs {
				g, err := strconv.ParseInt(p.Extra["goid"], 10, 64)
				if err != nil {
					t.Fatalf("process %d: goid %q", p.Proc, p.Extra["goid"])
				}
				w, ok := want[g]
				if !ok {
					continue // no transition: present only through its events
				}
				r := first[p.Proc]
				switch w.from {
				case xtrace.GoUndetermined:
					before++
					if w.t > 1_000_000 {
						late++
					}
					if r.Kind != trace.KindState || r.T != 0 || r.ID != goState(w.to) {
						t.Errorf("goroutine %d existed before the trace (status %v at %d ns): first record %s %s at %d, want state %s at 0",
							g, w.to, w.t, r.Kind, ix.StateName(r.ID), r.T, stateDefs[goState(w.to)].Name)
					}
				case xtrace.GoNotExist:
					created++
					if r.Kind != trace.KindState || r.T != w.t || r.ID != goState(w.to) {
						t.Errorf("goroutine %d created at %d ns: first record %s %d at %d, want state %s at its creation",
							g, w.t, r.Kind, r.ID, r.T, stateDefs[goState(w.to)].Name)
					}
				}
			}
			if before == 0 || created == 0 {
				t.Errorf("%d goroutines from before the trace, %d created in it; want some of each", before, created)
			}
			t.Logf("%d goroutines from before the trace (%d of them reached after 1 ms), %d created in it", before, late, created)
		})
	}
}
