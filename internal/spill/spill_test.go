package spill

import (
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// sum adds 8-byte big-endian counts.
func sum(dst, src []byte) []byte {
	return binary.BigEndian.AppendUint64(dst[:0], binary.BigEndian.Uint64(dst)+binary.BigEndian.Uint64(src))
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// writeRun writes the keys of m, sorted, as one run of s.
func writeRun(t *testing.T, s *Runs, m map[string]uint64) {
	t.Helper()
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := w.Add([]byte(k), u64(m[k])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMergeSums spills random counts of random keys in many runs (past
// MaxRuns, so that they are merged into one on the way) and checks that
// Merge gives every key once, in order, with the sum of its counts, twice.
func TestMergeSums(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]uint64{}
	s := New("test", sum)
	defer s.Close()
	for range 3*MaxRuns + 5 {
		m := map[string]uint64{}
		for range rng.IntN(200) {
			// Keys of different lengths sharing prefixes, the empty key too.
			k := strings.Repeat("ab", rng.IntN(4)) + string(rune('a'+rng.IntN(20)))
			if rng.IntN(50) == 0 {
				k = ""
			}
			v := rng.Uint64N(1000)
			m[k] += v
			want[k] += v
		}
		writeRun(t, s, m)
		if s.Len() > MaxRuns {
			t.Fatalf("%d runs kept, at most %d wanted", s.Len(), MaxRuns)
		}
	}
	for pass := range 2 {
		var keys []string
		err := s.Merge(func(key, val []byte) error {
			keys = append(keys, string(key))
			if got := binary.BigEndian.Uint64(val); got != want[string(key)] {
				t.Errorf("pass %d: key %q: %d, want %d", pass, key, got, want[string(key)])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys, slices.Sorted(maps.Keys(want))) {
			t.Fatalf("pass %d: keys %q, want %q", pass, keys, slices.Sorted(maps.Keys(want)))
		}
	}
}

// TestTakeAndNoCombine checks that Take moves runs from one set to another
// and that without a Combine every record comes out, equal keys in the
// order of the runs.
func TestTakeAndNoCombine(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a, b := New("test", nil), New("test", nil)
	defer a.Close()
	writeRun(t, a, map[string]uint64{"x": 1, "z": 2})
	writeRun(t, b, map[string]uint64{"x": 3, "y": 4})
	if err := a.Take(b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 || a.Len() != 2 || a.Records() != 4 {
		t.Fatalf("after Take: %d and %d runs, %d records", a.Len(), b.Len(), a.Records())
	}
	var got []string
	if err := a.Merge(func(key, val []byte) error {
		got = append(got, string(key)+"="+string(rune('0'+binary.BigEndian.Uint64(val))))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x=1", "x=3", "y=4", "z=2"}; !slices.Equal(got, want) {
		t.Fatalf("records %q, want %q", got, want)
	}
}

// TestFilesLeaveNoTrace checks that a run's file is gone from the
// temporary directory as soon as it is open, and closed by Close.
func TestFilesLeaveNoTrace(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	s := New("test", sum)
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.r.name, dir+string(os.PathSeparator)+"parscope-test-") || !strings.HasSuffix(w.r.name, ".run") {
		t.Errorf("run file %s, want parscope-test-PID-*.run in %s", w.r.name, dir)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 && w.r.unlinked {
		t.Errorf("a run said unlinked left %d files in %s", len(ents), dir)
	}
	if err := w.Add([]byte("k"), u64(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := s.runs[0].f
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(); err == nil {
		t.Error("the run's file is still open after Close")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Close left %d files in %s", len(ents), dir)
	}
}

// TestErrors checks that keys out of order, a run cut short and a
// temporary directory that does not exist are errors naming the file or
// the directory.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	s := New("test", sum)
	defer s.Close()
	w, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	w.Add([]byte("b"), u64(1))
	if err := w.Add([]byte("a"), u64(1)); err == nil || !strings.Contains(err.Error(), "keys out of order") || !strings.Contains(err.Error(), w.r.name) {
		t.Errorf("keys out of order: %v", err)
	}
	w.Abort()
	writeRun(t, s, map[string]uint64{"a": 1, "b": 2, "c": 3})
	if err := s.runs[0].f.Truncate(s.runs[0].size - 3); err != nil {
		t.Fatal(err)
	}
	s.runs[0].size -= 3
	err = s.Merge(func(key, val []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), s.runs[0].name) || !strings.Contains(err.Error(), "3 records expected") {
		t.Errorf("a run cut short: %v", err)
	}
	t.Setenv("TMPDIR", dir+"/missing")
	if _, err := s.Create(); err == nil || !strings.Contains(err.Error(), dir+"/missing") {
		t.Errorf("a missing temporary directory: %v", err)
	}
}

// TestSet counts random keys, many repeated, with a budget of a few keys
// (many runs, merged on the way) and with room for all, then again after
// Close.
func TestSet(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, budget := range []int64{0, 10 * setKeyCost, 1 << 20} {
		s := NewSet("test", budget)
		for round := range 2 {
			rng := rand.New(rand.NewPCG(uint64(round), 3))
			want := map[uint64]bool{}
			for range 5000 {
				k := rng.Uint64N(3000) * 0x9E3779B97F4A7C15
				want[k] = true
				if err := s.Add(k); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				if n, err := s.Len(); err != nil || n != len(want) {
					t.Fatalf("budget %d, round %d: %d keys (%v), want %d", budget, round, n, err, len(want))
				}
			}
			if spilled := s.runs != nil && s.runs.Len() > 0; spilled != (budget < 1<<16) {
				t.Errorf("budget %d: spilled %v", budget, spilled)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
