package otf2

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
)

// minimalDefs returns the records of a small valid definition file: a
// clock, strings, a system tree node, a location group, two locations, a
// region, MPI groups and a communicator, a metric.
func minimalDefs() [][]byte {
	return [][]byte{
		rec(defClockProperties, u(1e9), u(1000), u(5000)),
		rec(defString, u(0), cstr("")),
		rec(defString, u(1), cstr("node")),
		rec(defString, u(2), cstr("n1")),
		rec(defString, u(3), cstr("rank")),
		rec(defString, u(4), cstr("main")),
		rec(defString, u(5), cstr("W")),
		rec(defSystemTreeNode, u(0), u(2), u(1), []byte{0xff}),
		rec(defLocationGroup, u(0), u(3), []byte{1}, u(0)),
		rec(defLocation, u(0), u(3), []byte{1}, u(10), u(0)),
		rec(defLocation, u(1), u(3), []byte{1}, u(10), u(0)),
		rec(defRegion, u(0), u(4), u(0), []byte{0}, u(0), u(1), u(2), u(4), []byte{1, 0}),
		rec(defGroup, u(0), u(0), []byte{0}, u(2), u(0), u(1), []byte{groupCommLocations, 4}),
		rec(defGroup, u(1), u(0), []byte{0}, u(2), u(1), u(0), []byte{groupCommGroup, 4}),
		rec(defComm, u(0), u(0), u(1), []byte{0xff}),
		rec(defMetricMember, u(0), u(5), u(0), []byte{0, 0, 10, 1}, u(0), u(5)),
		rec(defMetricClass, u(0), []byte{1}, u(0), []byte{0, 0}),
	}
}

func rec(typ uint8, parts ...[]byte) []byte {
	b := []byte{typ}
	var p []byte
	for _, x := range parts {
		p = append(p, x...)
	}
	return append(append(b, byte(len(p))), p...)
}

func defFile(chunk int, recs [][]byte) []byte {
	e := newEnc(chunk)
	for _, r := range recs {
		if int(r[1]) != len(r)-2 { // deliberately wrong length: write as is
			e.b = append(e.b, r...)
			continue
		}
		e.def(r[0], r[2:])
	}
	return e.end()
}

func readDefsBytes(b []byte, chunk int) (*Defs, error) {
	return ReadDefs("traces.def", bytes.NewReader(b), int64(len(b)), int64(chunk))
}

func TestReadDefs(t *testing.T) {
	for _, chunk := range []int{64, 4096} { // 64 forces several chunks
		d, err := readDefsBytes(defFile(chunk, minimalDefs()), chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if d.Clock != (ClockProperties{1e9, 1000, 5000}) || len(d.Locations) != 2 || d.String(d.Regions[0].Name) != "main" ||
			d.Regions[0].Begin != 1 || d.Regions[0].End != 2 || len(d.Groups[1].Members) != 2 || d.Groups[1].Members[0] != 1 ||
			d.MetricMembers[0].ValueType != 10 || len(d.MetricClasses[0]) != 1 || d.Records != 17 {
			t.Errorf("chunk %d: decoded %+v", chunk, d)
		}
	}
}

func TestDefErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace map[int][]byte // record index -> new record (nil: remove)
		msg     string
	}{
		{"location group", map[int][]byte{9: rec(defLocation, u(0), u(3), []byte{1}, u(10), u(7))}, "location 0 refers to undefined location group 7"},
		{"region name", map[int][]byte{11: rec(defRegion, u(0), u(44), u(0), []byte{0}, u(0), u(1), u(2))}, "region 0 refers to undefined string 44"},
		{"comm group", map[int][]byte{14: rec(defComm, u(0), u(0), u(9), []byte{0xff})}, "communicator 0 refers to undefined group 9"},
		{"metric member", map[int][]byte{16: rec(defMetricClass, u(0), []byte{1}, u(3), []byte{0, 0})}, "undefined metric member 3"},
		{"tree parent", map[int][]byte{7: rec(defSystemTreeNode, u(0), u(2), u(1), u(5))}, "undefined parent 5"},
		{"no clock", map[int][]byte{0: nil}, "no ClockProperties"},
		{"duplicate string", map[int][]byte{2: rec(defString, u(0), cstr("x"))}, "string 0 is defined twice"},
		{"duplicate location", map[int][]byte{10: rec(defLocation, u(0), u(3), []byte{1}, u(10), u(0))}, "location 0 is defined twice"},
		{"record too long", map[int][]byte{3: {defString, 200, 1}}, "exceeds"},
		{"bad compressed", map[int][]byte{3: rec(defString, []byte{9, 1})}, "bad compressed integer"},
		{"unterminated string", map[int][]byte{3: rec(defString, u(9), []byte("abc"))}, "NUL-terminated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var recs [][]byte
			for i, r := range minimalDefs() {
				if n, ok := tc.replace[i]; ok {
					r = n
				}
				if r != nil {
					recs = append(recs, r)
				}
			}
			_, err := readDefsBytes(defFile(4096, recs), 4096)
			var fe *format.Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.msg) || fe.File != "traces.def" || fe.Offset < 0 {
				t.Errorf("got %v, want a located error containing %q", err, tc.msg)
			}
		})
	}
}

func TestEventReader(t *testing.T) {
	e := newEnc(128)
	e.event(100, evEnter, u(3))
	e.event(100, evMpiSend, u(1), u(0), u(10), u(16384))
	e.event(150, evMpiIsend, u(1), u(0), u(20), u(32768), u(7))
	e.event(160, 99, []byte{1, 2, 3}) // a record type this reader does not know
	e.event(170, evMpiIsendComplete, u(7))
	e.event(180, evMetric, u(0), []byte{2, 4}, u(42), []byte{10}, u(0x4000000000000000))
	for i := uint64(0); i < 20; i++ {
		e.event(200+i, evLeave, u(3))
	}
	b := e.end()
	er, err := NewEventReader("0.evt", bytes.NewReader(b), int64(len(b)), 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	for {
		var ev Event
		err := er.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 26 {
		t.Fatalf("%d events, want 26", len(got))
	}
	if g := got[0]; g.Type != evEnter || g.Time != 100 || g.Ref != 3 {
		t.Errorf("enter %+v", g)
	}
	if g := got[1]; g.Type != evMpiSend || g.Peer != 1 || g.Tag != 10 || g.Length != 16384 {
		t.Errorf("send %+v", g)
	}
	if g := got[2]; g.Request != 7 || g.Length != 32768 || g.Time != 150 {
		t.Errorf("isend %+v", g)
	}
	if g := got[3]; g.Type != 99 || g.Decoded || g.Time != 160 {
		t.Errorf("unknown %+v", g)
	}
	if g := got[5]; len(g.MetricValues) != 2 || g.MetricValues[0] != 42 || g.MetricTypes[1] != 10 || g.MetricValues[1] != 0x4000000000000000 {
		t.Errorf("metric %+v", g)
	}
	if g := got[25]; g.Type != evLeave || g.Time != 219 {
		t.Errorf("last %+v", g)
	}
}

func TestCursorBigEndian(t *testing.T) {
	c := cursor{b: []byte{2, 0x01, 0x02, 0xff, 1, 0x05, 0x00, 0, 0, 0, 0, 0, 0, 0x01, 0x00}, be: true}
	if v := c.u32(); v != 0x0102 {
		t.Errorf("u32 = %#x", v)
	}
	if v := c.u32(); v != 0xffffffff {
		t.Errorf("undefined u32 = %#x", v)
	}
	if v := c.u64(); v != 5 {
		t.Errorf("u64 = %d", v)
	}
	if v := c.full64(); v != 1 {
		t.Errorf("full64 = %#x", v)
	}
	if c.err != nil {
		t.Error(c.err)
	}
}
