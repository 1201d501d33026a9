package probe

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

type celsius float32

type vec []float64

type point struct {
	X, Y  float64
	Label string
	Tags  []int16
}

// allKinds has a field of every kind a state holds, and fields EncodeState
// skips.
type allKinds struct {
	B              bool
	I              int
	I8             int8
	I16            int16
	I32            int32
	I64            int64
	U              uint
	U8             uint8
	U16            uint16
	U32            uint32
	U64            uint64
	F32            float32
	F64            float64
	T              celsius
	S              string
	Bs             []bool
	Is             []int
	I8s            []int8
	I16s           []int16
	I32s           []int32
	I64s           []int64
	Us             []uint
	U8s            []uint8
	U16s           []uint16
	U32s           []uint32
	U64s           []uint64
	F32s           []float32
	F64s           []float64
	V              vec
	Ts             []celsius
	Arr            [3]float64
	Arr8           [2]uint8
	TArr           [2]celsius
	Ss             []string
	Inner          point
	Points         []point
	PArr           [2]point
	Nested         [][]int32
	hidden         map[string]int
	secret         int
	unexportedSpan []float64
}

func sampleState() allKinds {
	return allKinds{
		B: true, I: math.MinInt, I8: -7, I16: -300, I32: -1 << 30, I64: math.MinInt64,
		U: math.MaxUint, U8: 255, U16: 65535, U32: 1 << 31, U64: math.MaxUint64,
		F32: float32(math.Pi), F64: -math.E, T: -40, S: "héllo\x00",
		Bs: []bool{true, false, true}, Is: []int{-1, 2, math.MaxInt, 5, 6}, I8s: []int8{-128, 127},
		I16s: []int16{-2, 3}, I32s: []int32{math.MinInt32, 4}, I64s: []int64{5, -6, 7, 8, 9, math.MinInt64, 10},
		Us: []uint{7, 8, 9, 10, math.MaxUint}, U8s: []uint8{0, 1, 2, 255}, U16s: []uint16{9, 10}, U32s: []uint32{11},
		U64s: []uint64{12, 13}, F32s: []float32{0.5, float32(math.Inf(-1))},
		F64s: []float64{1.5, math.Inf(1), math.Copysign(0, -1), math.SmallestNonzeroFloat64},
		V:    vec{3, 4}, Ts: []celsius{1.25, -2},
		Arr: [3]float64{1, 2, 3}, Arr8: [2]uint8{8, 9}, TArr: [2]celsius{5, 6},
		Ss:     []string{"a", "", "ccc"},
		Inner:  point{X: 1, Y: 2, Label: "in", Tags: []int16{1}},
		Points: []point{{X: 3, Label: "p"}, {Y: 4, Tags: []int16{5, 6}}},
		PArr:   [2]point{{X: 7}, {Label: "q"}},
		Nested: [][]int32{{1, 2}, {3}},
	}
}

func mustEncode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := EncodeState(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStateRoundTrip decodes every kind into a zero struct.
func TestStateRoundTrip(t *testing.T) {
	in := sampleState()
	in.hidden, in.secret, in.unexportedSpan = map[string]int{"x": 1}, 3, []float64{1}
	b := mustEncode(t, &in)
	var out allKinds
	if err := DecodeState(b, &out); err != nil {
		t.Fatal(err)
	}
	in.hidden, in.secret, in.unexportedSpan = nil, 0, nil // skipped, as gob does
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	if again := mustEncode(t, &out); !bytes.Equal(again, b) {
		t.Fatal("re-encoding the decoded state gives other bytes")
	}
	// A signalling NaN keeps its bits, scalar or in a slice.
	nan := math.Float32frombits(0x7f800001)
	in.F32, in.F32s[0], in.T = nan, nan, celsius(nan)
	if err := DecodeState(mustEncode(t, &in), &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []float32{out.F32, out.F32s[0], float32(out.T)} {
		if math.Float32bits(f) != 0x7f800001 {
			t.Errorf("NaN bits %#x, want 0x7f800001", math.Float32bits(f))
		}
	}
}

// TestStateFormat pins the encoding of a small state byte by byte.
func TestStateFormat(t *testing.T) {
	type small struct {
		Ok  bool
		N   int
		H   int16
		F   float32
		S   string
		Xs  []float64
		Arr [2]uint16
	}
	b := mustEncode(t, &small{Ok: true, N: -2, H: 0x0102, F: 1, S: "ab", Xs: []float64{2}, Arr: [2]uint16{3, 0x0405}})
	want := []byte("PSSTATE\x01" +
		"\x01" +
		"\xfe\xff\xff\xff\xff\xff\xff\xff" +
		"\x02\x01" +
		"\x00\x00\x80\x3f" +
		"\x02\x00\x00\x00\x00\x00\x00\x00ab" +
		"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x40" +
		"\x03\x00\x05\x04")
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding\n got %q\nwant %q", b, want)
	}
}

type bigState struct {
	Step int
	A, B []float64
}

func newBigState(n int) bigState {
	s := bigState{Step: 3, A: make([]float64, n), B: make([]float64, n)}
	for i := range n {
		s.A[i], s.B[i] = float64(i)*0.5, -float64(i)
	}
	return s
}

// TestStateInPlace decodes twice into the same struct: the arrays stay,
// their contents change, nothing is allocated.
func TestStateInPlace(t *testing.T) {
	src := newBigState(1000)
	b := mustEncode(t, &src)
	dst := newBigState(1000)
	for i := range dst.A {
		dst.A[i], dst.B[i] = 7, 7
	}
	a0, b0 := &dst.A[0], &dst.B[0]
	for range 2 {
		if err := DecodeState(b, &dst); err != nil {
			t.Fatal(err)
		}
		if &dst.A[0] != a0 || &dst.B[0] != b0 {
			t.Fatal("DecodeState replaced an array of the right length")
		}
		if !reflect.DeepEqual(dst, src) {
			t.Fatal("decoded state differs from the encoded one")
		}
	}
	// A copy of the struct shares its arrays: the workers' Restore.
	cp := dst
	src.A[5] = 99
	if err := DecodeState(mustEncode(t, &src), &cp); err != nil {
		t.Fatal(err)
	}
	if dst.A[5] != 99 {
		t.Fatal("decoding into a copy did not write the shared array")
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := DecodeState(b, &dst); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("DecodeState in place: %v allocations, want 0", allocs)
	}
	// Slices of structs are decoded element by element in place too.
	ps := []point{{Tags: []int16{1, 2}}}
	in := allKinds{Points: ps}
	var out allKinds
	out.Points = []point{{Tags: make([]int16, 2)}}
	tags := &out.Points[0].Tags[0]
	if err := DecodeState(mustEncode(t, &in), &out); err != nil {
		t.Fatal(err)
	}
	if &out.Points[0].Tags[0] != tags || out.Points[0].Tags[1] != 2 {
		t.Fatal("a slice of structs was not decoded in place")
	}
}

// TestStateReallocates: a slice of another length is replaced, and the
// old array is left alone; an empty one becomes nil.
func TestStateReallocates(t *testing.T) {
	src := newBigState(10)
	src.B = nil
	b := mustEncode(t, &src)
	old := []float64{1, 2, 3}
	dst := bigState{A: old, B: []float64{4}}
	if err := DecodeState(b, &dst); err != nil {
		t.Fatal(err)
	}
	if len(dst.A) != 10 || dst.A[9] != 4.5 || dst.B != nil {
		t.Fatalf("decoded A %v, B %v: want 10 values and nil", dst.A, dst.B)
	}
	if !reflect.DeepEqual(old, []float64{1, 2, 3}) {
		t.Fatalf("the replaced array was written: %v", old)
	}
	// An empty slice that is already empty stays as it is.
	empty := []float64{}
	dst = bigState{A: make([]float64, 10), B: empty}
	if err := DecodeState(b, &dst); err != nil || dst.B == nil {
		t.Fatalf("empty B: %v, %#v", err, dst.B)
	}
}

// TestStateErrors asserts each decoding error's message.
func TestStateErrors(t *testing.T) {
	type flags struct {
		N  int
		On bool
		Bs []bool
	}
	good := mustEncode(t, &bigState{Step: 1, A: []float64{1, 2}, B: []float64{3}})
	set := func(b []byte, off int, x uint64) []byte {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint64(c[off:], x)
		return c
	}
	flagsBytes := mustEncode(t, &flags{N: 1, On: true, Bs: []bool{true, false}})
	cases := []struct {
		name string
		b    []byte
		v    any
		want string
	}{
		{"empty", nil, &bigState{}, `probe: state at offset 0: starts with "", want the magic "PSSTATE\x01" of a state EncodeState wrote`},
		{"gob", gobState(t, &bigState{}), &bigState{}, "probe: state at offset 0: starts with"},
		{"magic", append([]byte("PSSTATE\x02"), good[8:]...), &bigState{}, "want the magic"},
		{"truncated scalar", good[:12], &bigState{}, "probe: state at offset 8 (field Step): 8 bytes needed but only 4 left"},
		{"truncated length", good[:20], &bigState{}, "probe: state at offset 16 (field A): 8 bytes needed but only 4 left"},
		{"truncated elements", good[:len(good)-1], &bigState{}, "probe: state at offset 40 (field B): length 1 of 8-byte elements but only 7 bytes left"},
		{"huge length", set(good, 16, 99999999), &bigState{}, "probe: state at offset 16 (field A): length 99999999 of 8-byte elements but only 32 bytes left"},
		{"wrapping length", set(good, 16, math.MaxUint64), &bigState{}, "probe: state at offset 16 (field A): length 18446744073709551615 of 8-byte elements"},
		{"trailing", append(bytes.Clone(good), 0, 0), &bigState{}, "probe: state at offset 56: 2 trailing bytes after the last field"},
		{"bool", func() []byte { c := bytes.Clone(flagsBytes); c[16] = 2; return c }(), &flags{}, "probe: state at offset 16 (field On): bool byte 2, want 0 or 1"},
		{"bool slice", func() []byte { c := bytes.Clone(flagsBytes); c[26] = 9; return c }(), &flags{}, "probe: state at offset 26 (field Bs): element 1: bool byte 9, want 0 or 1"},
		{"string length", set(mustEncode(t, &point{Label: "ab"}), 24, 11), &point{}, "probe: state at offset 24 (field Label): length 11 but only 10 bytes left"},
		{"nested field", mustEncode(t, &allKinds{})[:245], &allKinds{}, "probe: state at offset 241 (field Inner.X): 8 bytes needed but only 4 left"},
		{"array of structs", mustEncode(t, &allKinds{})[:300], &allKinds{}, "probe: state at offset 297 (field PArr[].Label): 8 bytes needed but only 3 left"},
		{"not a pointer", good, bigState{}, "probe: DecodeState of a probe.bigState: want a non-nil pointer to a struct"},
		{"nil pointer", good, (*bigState)(nil), "probe: DecodeState of a *probe.bigState: want a non-nil pointer to a struct"},
		{"pointer to int", good, new(int), "probe: DecodeState of a *int: want a non-nil pointer to a struct"},
	}
	for _, c := range cases {
		err := DecodeState(c.b, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// Every truncation of a real state is an error, never a panic.
	full := mustEncode(t, func() *allKinds { s := sampleState(); return &s }())
	for n := range len(full) {
		var out allKinds
		if err := DecodeState(full[:n], &out); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(full))
		}
	}
}

// TestStateIntSlices: []int and []uint elements are stored in 8 bytes;
// a value that does not fit the platform's int is an error at its offset
// on 32-bit platforms and decodes on 64-bit ones (GOARCH=386 go test runs
// the former).
func TestStateIntSlices(t *testing.T) {
	type words struct {
		I []int
		U []uint
	}
	b := mustEncode(t, &words{I: []int{-5, 7}, U: []uint{3, 4}})
	var back words
	if err := DecodeState(b, &back); err != nil || !reflect.DeepEqual(back, words{I: []int{-5, 7}, U: []uint{3, 4}}) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	// Layout: magic 8, I's length 8 and elements 16, U's length 8 and elements 16.
	for _, c := range []struct {
		name string
		off  int
	}{{"int", 8 + 8 + 8}, {"uint", 8 + 24 + 8 + 8}} {
		big := bytes.Clone(b)
		binary.LittleEndian.PutUint64(big[c.off:], 1<<40)
		var out words
		err := DecodeState(big, &out)
		if strconv.IntSize == 64 {
			if err != nil || (c.name == "int" && int64(out.I[1]) != 1<<40) || (c.name == "uint" && uint64(out.U[1]) != 1<<40) {
				t.Errorf("%s: decoded %+v, %v; want 1<<40 in element 1", c.name, out, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), "does not fit a 32-bit int") {
			t.Errorf("%s: error %v, want the value out of range", c.name, err)
		}
	}
}

// TestStateUnsupported: types a state cannot hold are errors naming the
// field's path, at encoding and at decoding.
func TestStateUnsupported(t *testing.T) {
	type withMap struct {
		N   int
		Foo map[string]int
	}
	type withPtr struct{ P *int }
	type withIface struct{ I any }
	type withChan struct{ C chan int }
	type withFunc struct{ F func() }
	type withComplex struct{ Z complex128 }
	type hiddenOnly struct{ n int }
	type withHidden struct {
		N int
		H hiddenOnly
	}
	type withEmpty struct{ E [][0]int }
	type inSlice struct{ Ps []withPtr }
	type self struct {
		N    int
		Kids []self
	}
	cases := []struct {
		v    any
		want string
	}{
		{&withMap{}, "probe: withMap.Foo: map[string]int is not supported; a state holds bools, numbers, strings, and structs, arrays and slices of them"},
		{&withPtr{}, "probe: withPtr.P: *int is not supported"},
		{&withIface{}, "probe: withIface.I: interface {} is not supported"},
		{&withChan{}, "probe: withChan.C: chan int is not supported"},
		{&withFunc{}, "probe: withFunc.F: func() is not supported"},
		{&withComplex{}, "probe: withComplex.Z: complex128 is not supported"},
		{&hiddenOnly{n: 1}, "probe: hiddenOnly: probe.hiddenOnly is not supported: it has no exported fields"},
		{&withHidden{}, "probe: withHidden.H: probe.hiddenOnly is not supported: it has no exported fields"},
		{&withEmpty{}, "probe: withEmpty.E: [][0]int is not supported: its elements take no bytes"},
		{&inSlice{}, "probe: inSlice.Ps[].P: *int is not supported"},
		{&self{}, "probe: self.Kids[]: probe.self is not supported: the type contains itself"},
		{&struct{ M map[int]int }{}, "probe: state.M: map[int]int is not supported"},
		{42, "probe: EncodeState of a int: want a non-nil pointer to a struct"},
	}
	for _, c := range cases {
		if _, err := EncodeState(c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EncodeState(%T): error %v, want %q", c.v, err, c.want)
		}
		if c.v == 42 {
			continue
		}
		if err := DecodeState([]byte(stateMagic), c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeState(%T): error %v, want %q", c.v, err, c.want)
		}
	}
}

func gobState(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecodeState: no input panics; what decodes re-encodes to the same
// bytes, whether decoded into a zero struct or in place.
func FuzzDecodeState(f *testing.F) {
	s := sampleState()
	full, err := EncodeState(&s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add([]byte(stateMagic))
	var zero allKinds
	z, _ := EncodeState(&zero)
	f.Add(z)
	big := newBigState(4)
	bb, _ := EncodeState(&big)
	f.Add(bb)
	f.Fuzz(func(t *testing.T, b []byte) {
		var fresh allKinds
		err := DecodeState(b, &fresh)
		live := sampleState()
		errLive := DecodeState(b, &live)
		if (err == nil) != (errLive == nil) {
			t.Fatalf("into a zero struct: %v; in place: %v", err, errLive)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "probe: state at offset ") {
				t.Fatalf("error without an offset: %v", err)
			}
			return
		}
		for _, v := range []*allKinds{&fresh, &live} {
			again, err := EncodeState(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Fatalf("decoded and re-encoded: %d bytes differ from the %d decoded", len(again), len(b))
			}
		}
	})
}

// bigBenchState is the benchmark's state: two 512×512 grids (4 MiB).
func bigBenchState() bigState { return newBigState(512 * 512) }

// BenchmarkDecodeState restores a 2×512×512 float64 state in place, as a
// worker's Restore does before every timed interval.
func BenchmarkDecodeState(b *testing.B) {
	s := bigBenchState()
	enc := mustEncode(b, &s)
	dst := bigBenchState()
	b.SetBytes(int64(len(enc)))
	b.ResetTimer()
	for b.Loop() {
		if err := DecodeState(enc, &dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeState snapshots the same state.
func BenchmarkEncodeState(b *testing.B) {
	s := bigBenchState()
	b.SetBytes(int64(len(mustEncode(b, &s))))
	for b.Loop() {
		if _, err := EncodeState(&s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStateGob decodes the same state with encoding/gob, the
// codec DecodeState replaced: the reference figure.
func BenchmarkDecodeStateGob(b *testing.B) {
	s := bigBenchState()
	enc := gobState(b, &s)
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		var dst bigState
		if err := gob.NewDecoder(bytes.NewReader(enc)).Decode(&dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateCopy copies the state's bytes: the memcpy bound.
func BenchmarkStateCopy(b *testing.B) {
	s := bigBenchState()
	enc := mustEncode(b, &s)
	dst := make([]byte, len(enc))
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		copy(dst, enc)
	}
}
