package ocs

import (
	"context"
	"math"
	"testing"

	"github.com/parscope/parscope/trace"
)

// FuzzSimulate builds traces from arbitrary bytes (sends, receives,
// blocking or not, collectives, events, peers in and out of the run) and
// checks that building and simulating them never panics nor hangs and
// that the results are consistent.
func FuzzSimulate(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{1, 0x10, 0x20, 0x31, 0x42, 0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9})
	f.Add([]byte{2, 0xff, 0x00, 0x7f, 0x80, 0x01, 0xfe, 0x33, 0x44})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(data[0]%4) + 1
		m := &trace.Memory{}
		m.H.Runs = []trace.RunInfo{{ID: 0, Procs: int32(n)}}
		clock := make([]int64, n)
		for i := 1; i+1 < len(data); i += 2 {
			a, b := data[i], data[i+1]
			p := int32(a) % int32(n)
			clock[p] += int64(b%16) * 100
			t0 := clock[p]
			peer := int32(b>>4) % int32(n+1) // n is outside the run
			bytes := int64(a>>2) * 100
			end := t0 + int64(a&3)*50
			var r trace.Record
			switch a % 5 {
			case 0:
				r = trace.Send(0, p, t0, end, peer, bytes, int32(b&1), 0)
			case 1:
				r = trace.Recv(0, p, t0, end, peer, bytes, int32(b&1), 0)
				if b&2 != 0 {
					r.Peer = trace.NoPeer
				}
			case 2:
				r = trace.Coll(0, p, t0, end, trace.CollectiveOp(b%12), int32(b>>5)%int32(n+1)-1, bytes, 0)
			case 3:
				r = trace.Event(0, p, t0, 0, 0)
			case 4:
				r = trace.Send(0, p, t0, end+500, peer, bytes, 0, 0)
				r.Seq = int32(i)
			}
			if b&8 != 0 && r.Kind == trace.KindRecv {
				r.Seq = int32(i)
				r.End += 400
			}
			m.Records = append(m.Records, r)
			clock[p] = max(clock[p], r.EndTime())
		}
		m.Sort()
		w, err := Load(context.Background(), &m.H, m.Reader(), Options{Decompose: trace.Decomposition(data[0] % 3)})
		if err != nil {
			t.Fatal(err)
		}
		p := Params{OpticalBW: 1e10, SwitchLatency: 1e-6, ElecBW: 1e9, ElecLatency: 1e-7, Threshold: 200}
		sent := int64(w.Messages())
		for _, s := range Strategies {
			for _, k := range []int{0, 1, 3} {
				r, err := w.Simulate(s, k, p)
				if err != nil {
					t.Fatal(err)
				}
				if math.IsNaN(r.Time) || math.IsInf(r.Time, 0) || r.Time < 0 || math.IsNaN(r.Delay) || r.Delay < 0 ||
					r.Messages > sent || r.CircuitBytes > r.Bytes || r.CircuitMessages > r.Messages || r.PlanesUsed > k {
					t.Fatalf("%v, %d planes: %+v (%d messages sent)", s, k, r, sent)
				}
				if k == 0 && r.CircuitMessages != 0 {
					t.Fatalf("circuits without planes: %+v", r)
				}
			}
		}
	})
}
