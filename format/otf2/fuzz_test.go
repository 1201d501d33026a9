package otf2

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/realdata"
)

// checkLocated fails unless err is a located error inside data.
func checkLocated(t *testing.T, err error, n int) {
	t.Helper()
	var fe *format.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *format.Error", err)
	}
	if fe.Offset < 0 || fe.Offset > int64(n)+1<<20 {
		t.Fatalf("error %v has offset %d outside the input (%d bytes)", err, fe.Offset, n)
	}
}

func chunkSizes(data []byte) []int64 {
	return []int64{64, max(int64(len(data)), chunkHeaderSize+1)}
}

// FuzzEvents feeds arbitrary bytes to the event file decoder: it must
// return events or a located error, never panic or loop.
func FuzzEvents(f *testing.F) {
	e := newEnc(64)
	e.event(1, evEnter, u(3))
	e.event(2, evMpiSend, u(1), u(0), u(10), u(16384))
	e.event(3, evMetric, u(0), []byte{1, 4}, u(42))
	e.event(4, evProgramBegin, u(8), u(1), u(9))
	e.event(5, evMpiCollEnd, []byte{11}, u(0), u(0), u(8), u(8))
	e.event(6, 99, []byte{1, 2})
	e.event(7, evLeave, u(3))
	f.Add(e.end())
	b := realdata.Read(f, "traces/otf2/ping-pong-otf2-papi/traces/0.evt")
	f.Add(b[:min(len(b), 400)])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cs := range chunkSizes(data) {
			er, err := NewEventReader("f.evt", bytes.NewReader(data), int64(len(data)), cs, nil)
			if err != nil {
				checkLocated(t, err, len(data))
				continue
			}
			var ev Event
			for n := 0; ; n++ {
				if n > len(data) {
					t.Fatalf("%d events from %d bytes", n, len(data))
				}
				err := er.Next(&ev)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					checkLocated(t, err, len(data))
					break
				}
				if len(ev.MetricTypes) != len(ev.MetricValues) {
					t.Fatal("metric types and values differ in length")
				}
			}
		}
	})
}

// FuzzDefs feeds arbitrary bytes to the global and local definition
// decoders and to the anchor file parser.
func FuzzDefs(f *testing.F) {
	f.Add(defFile(4096, minimalDefs()))
	f.Add(defFile(64, minimalDefs()[:9]))
	for _, p := range []string{"traces.def", "traces/1.def", "traces.otf2"} {
		b := realdata.Read(f, "traces/otf2/ping-pong-otf2/"+p)
		f.Add(b[:min(len(b), 2000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cs := range chunkSizes(data) {
			if d, err := ReadDefs("f.def", bytes.NewReader(data), int64(len(data)), cs); err != nil {
				checkLocated(t, err, len(data))
			} else if !d.HasClock {
				t.Fatal("accepted definitions without a clock")
			}
			if _, err := ReadLocalDefs("f.def", bytes.NewReader(data), int64(len(data)), cs); err != nil {
				checkLocated(t, err, len(data))
			}
		}
		if _, err := parseAnchor("f.otf2", data); err != nil {
			checkLocated(t, err, len(data))
		}
	})
}
