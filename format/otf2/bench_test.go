package otf2

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/parscope/parscope/format/formattest"
)

// syntheticEvents returns an event file of n events in 1 MiB chunks:
// Enter, MpiSend, Leave, Enter, MpiRecv, Leave repeated, every event at a
// new timestamp, the mix Score-P writes for an MPI code.
func syntheticEvents(n int) []byte {
	e := newEnc(1 << 20)
	t := uint64(1000)
	for i := 0; i < n; i++ {
		t += 17
		switch i % 6 {
		case 0, 3:
			e.event(t, evEnter, u(uint64(193+i%6)))
		case 1:
			e.event(t, evMpiSend, u(1), u(0), u(10), u(uint64(16384+i)))
		case 4:
			e.event(t, evMpiRecv, u(0), u(0), u(20), u(uint64(16384+i)))
		default:
			e.event(t, evLeave, u(uint64(193+i%6-2)))
		}
	}
	return e.end()
}

// decodeAll decodes the event file data (1 MiB chunks) and calls f with
// every event, failing the benchmark on an error.
func decodeAll(b *testing.B, data []byte, f func(*Event)) {
	er, err := NewEventReader("bench.evt", bytes.NewReader(data), int64(len(data)), 1<<20, nil)
	if err != nil {
		b.Fatal(err)
	}
	var ev Event
	for {
		err := er.Next(&ev)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		f(&ev)
	}
}

// BenchmarkDecode measures the event decoder alone.
func BenchmarkDecode(b *testing.B) {
	const n = 1 << 20
	data := syntheticEvents(n)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		k := 0
		decodeAll(b, data, func(*Event) { k++ })
		if k != n {
			b.Fatalf("%d events, want %d", k, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkConvert measures decoding plus conversion to trace records
// (region and communicator checks, rank resolution, tick to ns).
func BenchmarkConvert(b *testing.B) {
	const n = 1 << 20
	data := syntheticEvents(n)
	d, err := readDefsBytes(defFile(4096, minimalDefs()), 4096)
	if err != nil {
		b.Fatal(err)
	}
	for id := uint32(193); id < 200; id++ {
		d.Regions[id] = Region{}
	}
	ar := &Archive{Anchor: &Anchor{EventChunkSize: 1 << 20}, Defs: d}
	b.ResetTimer()
	for b.Loop() {
		w := &formattest.Count{}
		cv, err := newConverter(ar, 0, w)
		if err != nil {
			b.Fatal(err)
		}
		cv.proc, cv.reqs = 0, map[uint64]int{}
		decodeAll(b, data, func(ev *Event) {
			if err := cv.event(ev, ""); err != nil {
				b.Fatal(err)
			}
		})
		if w.N != n {
			b.Fatalf("%d records, want %d", w.N, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
