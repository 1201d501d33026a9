package tracetest

import (
	"cmp"
	"slices"

	"github.com/parscope/parscope/trace"
)

// Mixed returns a trace of every kind of record, irregular enough that
// the analyses see varied states: runs runs of procs processes, each
// process steps times through a loop inside "main" (processes begin at
// different times), entering a state drawn at random each step (with
// states; without, the trace has no state records and its states are
// derived from its regions), sending to the next process inside MPI_Send
// every third step (the next one receiving inside MPI_Recv), joining an
// MPI_Allreduce of the whole run every fifth, recording an event every
// fourth and a counter every sixth, and writing a basic block vector per
// step; with states each process records at its end the counter
// "occupancy compute" (as the instrument library does) and every third
// process ends in the absent state "gone".
// The records are time-merged (trace.Less).
func Mixed(runs, procs int32, steps int, states bool) (*trace.Header, []trace.Record) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	world := make([]int32, procs)
	for p := range world {
		world[p] = int32(p)
	}
	for r := range runs {
		h.Runs = append(h.Runs, trace.RunInfo{ID: r, Procs: procs})
	}
	if states {
		for s, name := range []string{"compute", "wait", "io", "sync"} {
			h.States = append(h.States, trace.StateDef{ID: int32(s), Name: name})
		}
		h.States = append(h.States, trace.StateDef{ID: 4, Name: "gone", Absent: true})
	}
	h.Regions = []trace.RegionDef{
		{ID: 1, Kind: trace.RegionFunction, Label: "main", Parent: -1},
		{ID: 2, Kind: trace.RegionLoop, Label: "loop", Parent: 1},
		{ID: 3, Kind: trace.RegionCall, Label: "MPI_Send", Parent: -1},
		{ID: 4, Kind: trace.RegionCall, Label: "MPI_Recv", Parent: -1},
		{ID: 5, Kind: trace.RegionCall, Label: "MPI_Allreduce", Parent: -1},
	}
	h.Events = []trace.EventDef{{ID: 0, Name: "tick"}, {ID: 1, Name: "tock"}, {ID: 2, Name: "flush"}}
	h.Counters = []trace.CounterDef{{ID: 0, Name: "bytes", Unit: "B"}, {ID: 1, Name: "occupancy compute", Unit: "ns"}}
	h.Comms = []trace.CommDef{{ID: 0, Name: "world", Members: world}}

	var recs []trace.Record
	x := uint64(0x9e3779b97f4a7c15)
	rand := func(n int) int { // xorshift: the same trace every call
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(n))
	}
	for r := range runs {
		// Step k of every process begins at the same time, so that
		// messages and collectives meet; processes begin and end apart.
		at := make([]int64, steps+1)
		for k := 1; k <= steps; k++ {
			at[k] = at[k-1] + 200 + int64(rand(150))
		}
		for p := range procs {
			first := int(p) % 3
			t0 := at[first] + int64(p)
			recs = append(recs, trace.Enter(r, p, t0, 1))
			for k := first; k < steps; k++ {
				t := max(at[k], t0)
				if states {
					recs = append(recs, trace.State(r, p, t, int32(rand(4))))
				}
				recs = append(recs, trace.Enter(r, p, t, 2))
				if k%3 == 0 && k > 2 {
					switch {
					case p%2 == 0 && p+1 < procs:
						recs = append(recs, trace.Enter(r, p, t+10, 3), trace.Send(r, p, t+10, t+20, p+1, int64(64+rand(4096)), int32(k), 0), trace.Exit(r, p, t+20, 3))
					case p%2 == 1:
						recs = append(recs, trace.Enter(r, p, t+10, 4), trace.Recv(r, p, t+10, t+30, p-1, 0, int32(k), 0), trace.Exit(r, p, t+30, 4))
					}
				}
				if k%5 == 0 && k > 2 {
					recs = append(recs, trace.Enter(r, p, t+40, 5), trace.Coll(r, p, t+40, t+45+int64(rand(20)), trace.OpAllreduce, 0, 8, 0), trace.Exit(r, p, t+70, 5))
				}
				if k%4 == 0 {
					recs = append(recs, trace.Event(r, p, t+80, int32(rand(3)), int64(k)))
				}
				if k%6 == 0 {
					recs = append(recs, trace.Counter(r, p, t+90, 0, float64(rand(1000))/7))
				}
				recs = append(recs, trace.Exit(r, p, t+100, 2))
				for b := range 1 + rand(4) {
					recs = append(recs, trace.BBV(r, p, int32(k-first), t+100, int32(1+7*b+rand(7)), int64(1+rand(500))))
				}
			}
			end := at[steps] + int64(p)
			recs = append(recs, trace.Exit(r, p, end, 1))
			if states {
				recs = append(recs, trace.Counter(r, p, end, 1, float64(end-t0)/4))
				if p%3 == 0 {
					recs = append(recs, trace.State(r, p, end, 4))
				}
			}
		}
	}
	// The receives carry the bytes of their send.
	type msg struct{ run, src, tag int32 }
	sent := map[msg]int64{}
	for _, rec := range recs {
		if rec.Kind == trace.KindSend {
			sent[msg{rec.Run, rec.Proc, rec.Tag}] = rec.Value
		}
	}
	for i := range recs {
		if recs[i].Kind == trace.KindRecv {
			recs[i].Value = sent[msg{recs[i].Run, recs[i].Peer, recs[i].Tag}]
		}
	}
	slices.SortStableFunc(recs, func(a, b trace.Record) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.T, b.T), cmp.Compare(a.Proc, b.Proc))
	})
	return h, recs
}
