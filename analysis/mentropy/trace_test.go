package mentropy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// A two-process trace: process 0 emits the Table 4 slave stream as named
// events, process 1 a short stream as states, with a dropped-count event
// (which is not part of the stream) in between.
func twoProcTrace() *trace.Memory {
	m := &trace.Memory{}
	names := []string{"prog_st", "recv1", "do_calc", "send_res", "prog_sp", DroppedEvent}
	for i, n := range names {
		m.H.Events = append(m.H.Events, trace.EventDef{ID: int32(10 + i), Name: n})
	}
	m.H.States = []trace.StateDef{{ID: 0, Name: "A"}, {ID: 1, Name: "B"}}
	stream := []int{0, 1}
	for range 100 {
		stream = append(stream, 2)
	}
	stream = append(stream, 3, 4)
	for i, e := range stream {
		_ = m.Add(trace.Event(0, 0, int64(i*10), int32(10+e), 0))
		if i == 50 {
			_ = m.Add(trace.Event(0, 0, int64(i*10+1), 15, 7))
		}
	}
	for i, s := range []int32{0, 1, 1, 0} {
		_ = m.Add(trace.State(0, 1, int64(i), s))
	}
	m.Sort()
	return m
}

func TestFromTrace(t *testing.T) {
	m := twoProcTrace()
	got, err := FromTrace(context.Background(), &m.H, m.Reader(), OfEvents, table4, ProbSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Proc != 0 || len(got[0].Steps) != 104 {
		t.Fatalf("series: %d processes", len(got))
	}
	s := &got[0]
	want := map[int]string{0: "6.931472", 3: "0.499345", 6: "0.000004", 102: "0.921034", 103: "6.931472"}
	for i, w := range want {
		if fmt6(s.Steps[i].H) != w {
			t.Errorf("event %d: %s, want %s", i, fmt6(s.Steps[i].H), w)
		}
	}
	if s.T[102] != 1020 || s.Window(0) != "* * * *" || s.Window(3) != "do_calc recv1 prog_st *" {
		t.Errorf("T %d, windows %q %q", s.T[102], s.Window(0), s.Window(3))
	}
	st, err := FromTrace(context.Background(), &m.H, m.Reader(), OfStates, table4, ProbSpec{Mode: Given, Table: map[string]float64{"A": 0.5, "B": 0.5}})
	if err != nil || len(st) != 1 || st[0].Proc != 1 {
		t.Fatalf("states: %v %d", err, len(st))
	}
	// B then B: α case I=1, p_w = p·p·α0 = 0.125.
	if s := st[0].Steps[2]; s.Case != Alpha || !near(s.Pw, 0.125) || !near(s.H, 100*0.125*g(0.7)) {
		t.Errorf("state step %+v", s)
	}
	_, err = FromTrace(context.Background(), &m.H, m.Reader(), OfStates, table4, ProbSpec{Mode: Given, Table: map[string]float64{"A": 1}})
	if err == nil || err.Error() != `run 0 process 1: mentropy: unknown event "B": not in the probability table` {
		t.Errorf("unknown: %v", err)
	}
	if _, err := FromTrace(context.Background(), &m.H, m.Reader(), "bogus", table4, ProbSpec{}); err == nil {
		t.Error("accepted stream bogus")
	}
}

func TestPhases(t *testing.T) {
	// A master/worker-like worker: two tasks then the end.
	var names []string
	names = append(names, "prog_st", "recv1")
	for range 2 {
		names = append(names, strings.Split(strings.TrimSpace(strings.Repeat("do_calc ", 20)), " ")...)
		names = append(names, "send_res", "recv1")
	}
	names = append(names, "prog_sp")
	s, err := FromNames(names, table4, ProbSpec{})
	if err != nil {
		t.Fatal(err)
	}
	got := Phases(&s, 0.1, 3)
	want := []string{"0-21 do_calc", "22-43 do_calc", "44-46 send_res"}
	if len(got) != len(want) {
		t.Fatalf("phases %+v", got)
	}
	for i, p := range got {
		if g := fmt.Sprintf("%d-%d %s", p.Start, p.End, p.Dominant); g != want[i] {
			t.Errorf("phase %d: %s, want %s", i, g, want[i])
		}
	}
	if got[0].Share != 20.0/22 {
		t.Errorf("share %v", got[0].Share)
	}
	// A high threshold finds one phase.
	if got := Phases(&s, 100, 3); len(got) != 1 || got[0].End != len(names)-1 {
		t.Errorf("one phase: %+v", got)
	}
}
