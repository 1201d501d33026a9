package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sameAsMarshal fails t unless h.AppendJSON gives the bytes json.Marshal
// gives for h.
func sameAsMarshal(t *testing.T, h *Header) {
	t.Helper()
	want, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	got := h.AppendJSON([]byte("prefix"))
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("AppendJSON did not append to its argument: %q", got)
	}
	if got = got[len("prefix"):]; !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON and json.Marshal differ:\n got  %s\n want %s", got, want)
	}
}

// fill sets every field of the value v points to, recursively, to a value
// that is not its zero, so that a field AppendJSON leaves out shows as a
// difference from json.Marshal. Strings come from texts in turn, slices
// and maps get two elements. A field of a kind fill does not know fails
// the test, so that a new field of a new kind is not silently skipped.
func fill(t *testing.T, v reflect.Value, n *int, texts []string) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n, texts)
			}
		}
	case reflect.String:
		v.SetString(texts[*n%len(texts)])
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(int64(*n) * -7919)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(uint64(*n % 200))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), n, texts)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, n, texts)
			fill(t, e, n, texts)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		t.Fatalf("fill does not know the kind %s (%s): teach it, and AppendJSON the field", v.Kind(), v.Type())
	}
}

func TestHeaderAppendJSONEveryField(t *testing.T) {
	texts := []string{
		"plain", "", "quote \" and back\\slash", "<html> & more", "tab\tnew\nline\rret",
		"\b\f\x00\x01\x1f\x7f", "héllo wörld ✓", "bad \xff utf8 \xc3", "line\u2028para\u2029end",
		"zürich/ranks/0.otf2", "MPI_Allreduce",
	}
	for seed := range 5 {
		var h Header
		n := seed
		fill(t, reflect.ValueOf(&h).Elem(), &n, texts)
		if h.Repairs == nil || h.Comms[1].Members == nil || !h.States[0].Absent {
			t.Fatalf("fill left fields empty: %+v", h)
		}
		sameAsMarshal(t, &h)
	}
}

func TestHeaderAppendJSONEmpties(t *testing.T) {
	for name, h := range map[string]*Header{
		"zero": {},
		"empty slices and maps": {
			Runs: []RunInfo{}, States: []StateDef{}, Regions: []RegionDef{}, Events: []EventDef{},
			Counters: []CounterDef{}, Comms: []CommDef{{Members: []int32{}}}, Procs: []ProcInfo{{Extra: map[string]string{}}},
			Repairs: map[string]int64{}, Meta: Meta{Inputs: []string{}, CommandLine: []string{}, Extra: map[string]string{}},
		},
		"zeros inside": {
			Runs:    []RunInfo{{}},
			States:  []StateDef{{}},
			Regions: []RegionDef{{}},
			Events:  []EventDef{{}},
			Comms:   []CommDef{{}},
			Meta:    Meta{CommandLine: []string{""}, Extra: map[string]string{"": ""}},
			Repairs: map[string]int64{"b": 0, "a": -1, "c": 1 << 62},
		},
		"a recording's": {
			Meta: Meta{ClockResolution: 1, Source: "instrument", Program: "spectral-norm", CommandLine: []string{"./spectral-norm", "-n", "1500"},
				Host: "vm", Extra: map[string]string{"clock": "monotonic", "start": "2026-12-07T15:11:42.123+00:00", "parscope.instrumented": "true"}},
			Runs:     []RunInfo{{ID: 0, Name: "spectral-norm", Procs: 5}},
			States:   []StateDef{{ID: 0, Name: "main.main#1", File: "main.go", Line: 12}, {ID: 1, Name: "ended", Absent: true}},
			Regions:  []RegionDef{{ID: 0, Kind: RegionFunction, Label: "main.main", Parent: -1}, {ID: 1, Kind: RegionLoop, Label: "for", Line: 20, EndLine: 30, Parent: 0}},
			Events:   []EventDef{{ID: 0, Name: "dropped"}},
			Counters: []CounterDef{{ID: 3, Name: "occupancy run", Unit: "ns"}},
		},
	} {
		t.Run(name, func(t *testing.T) { sameAsMarshal(t, h) })
	}
}

func FuzzHeaderAppendJSON(f *testing.F) {
	f.Add("instrument", "main.main", "k", "v", int64(1), int32(-1), uint8(3), []byte{1, 2})
	f.Add("a\"<b>&\\", "\xff\xfe", "\u2028", "\x00\n", int64(-1<<63), int32(1<<31-1), uint8(255), []byte{})
	f.Fuzz(func(t *testing.T, s1, s2, k, v string, i64 int64, i32 int32, u8 uint8, flags []byte) {
		bit := func(i int) bool { return i < len(flags) && flags[i]&1 == 1 }
		h := &Header{
			Meta:    Meta{ClockResolution: i64, Source: s1, Program: s2, Extra: map[string]string{k: v, s1: s2}},
			Runs:    []RunInfo{{ID: i32, Name: s1, Procs: i32 / 2}},
			States:  []StateDef{{ID: i32, Name: s2, Description: k, File: v, Line: i32, Absent: bit(0)}},
			Regions: []RegionDef{{ID: i32, Kind: RegionKind(u8), Label: s1, Function: s2, File: k, Line: i32, EndLine: -i32, Parent: i32}},
			Comms:   []CommDef{{ID: i32, Name: v, Members: []int32{i32, 0, -i32}, Self: bit(1), Unknown: bit(2)}},
			Procs:   []ProcInfo{{Run: i32, Proc: i32, Name: k, Extra: map[string]string{v: k}}},
			Repairs: map[string]int64{k: i64, v: -i64},
		}
		if bit(3) {
			h.Meta.CommandLine = strings.Fields(s1 + " " + s2)
		}
		if bit(4) {
			h.Runs = nil
		}
		sameAsMarshal(t, h)
	})
}
