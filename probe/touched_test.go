package probe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// spansOf lists, ascending, the bytes the spans cover.
func spansOf(z []span) []int {
	var out []int
	for _, s := range z {
		for i := s.lo; i < s.hi; i++ {
			out = append(out, i)
		}
	}
	return out
}

func TestUntouchedSearch(t *testing.T) {
	const n, chunk = 1000, 10
	read := map[int]bool{5: true, 123: true, 124: true, 999: true}
	for i := 500; i <= 530; i++ {
		read[i] = true
	}
	var calls int
	z, tries := untouched(n, chunk, func(z []span) bool {
		calls++
		for i := 1; i < len(z); i++ {
			if z[i].lo < z[i-1].hi {
				t.Fatalf("spans %v: not ascending", z)
			}
		}
		for _, i := range spansOf(z) {
			if read[i] {
				return false
			}
		}
		return true
	})
	if tries != calls {
		t.Errorf("tries %d, try called %d times", tries, calls)
	}
	// Kept: the chunks holding a read byte, and nothing else.
	var want []int
	for c := 0; c < n; c += chunk {
		hit := false
		for i := c; i < c+chunk; i++ {
			hit = hit || read[i]
		}
		if !hit {
			for i := c; i < c+chunk; i++ {
				want = append(want, i)
			}
		}
	}
	if got := spansOf(z); !slices.Equal(got, want) {
		t.Fatalf("zeroed %d bytes, want %d: %v", len(got), len(want), z)
	}
	for i := 1; i < len(z); i++ {
		if z[i].lo <= z[i-1].hi {
			t.Errorf("spans %v and %v touch: not merged", z[i-1], z[i])
		}
	}
	if tries > 2*n/chunk {
		t.Errorf("%d tries for %d chunks", tries, n/chunk)
	}
}

// The search tries each part together with those already accepted, so the
// result passes try as a whole even when parts pass alone but not together.
func TestUntouchedSearchCumulative(t *testing.T) {
	// Either of bytes 200 and 700 may be zeroed, not both.
	try := func(z []span) bool {
		b := spansOf(z)
		return !(slices.Contains(b, 200) && slices.Contains(b, 700))
	}
	z, _ := untouched(1000, 10, try)
	if !try(z) {
		t.Fatalf("result %v fails try", z)
	}
	if got := len(spansOf(z)); got != 990 {
		t.Fatalf("zeroed %d bytes, want 990 (one chunk kept)", got)
	}
}

func TestSame(t *testing.T) {
	orig := []byte{1, 2, 3, 4, 5, 6}
	ref := outcome{end: []byte{1, 9, 3, 4, 8, 6}, blocks: 10, hash: 7}
	z := []span{{1, 2}, {3, 5}}
	for _, c := range []struct {
		name string
		got  outcome
		want bool
	}{
		{"identical", outcome{end: []byte{1, 9, 3, 4, 8, 6}, blocks: 10, hash: 7}, true},
		{"untouched bytes stay zero", outcome{end: []byte{1, 9, 3, 0, 8, 6}, blocks: 10, hash: 7}, true},
		{"a zeroed byte the run overwrote was not left zero", outcome{end: []byte{1, 9, 3, 4, 0, 6}, blocks: 10, hash: 7}, false},
		{"a zeroed byte changed otherwise", outcome{end: []byte{1, 9, 3, 7, 8, 6}, blocks: 10, hash: 7}, false},
		{"a byte outside the zeroed spans changed", outcome{end: []byte{1, 9, 0, 4, 8, 6}, blocks: 10, hash: 7}, false},
		{"the last byte changed", outcome{end: []byte{1, 9, 3, 4, 8, 0}, blocks: 10, hash: 7}, false},
		{"other blocks", outcome{end: []byte{1, 9, 3, 4, 8, 6}, blocks: 10, hash: 8}, false},
		{"more blocks", outcome{end: []byte{1, 9, 3, 4, 8, 6}, blocks: 11, hash: 7}, false},
		{"another size", outcome{end: []byte{1, 9, 3, 4, 8}, blocks: 10, hash: 7}, false},
	} {
		if got := same(orig, ref, c.got, z); got != c.want {
			t.Errorf("%s: same = %v, want %v", c.name, got, c.want)
		}
	}
	// A state whose size changed over the interval matches nothing.
	if same(orig[:5], outcome{end: orig[:4]}, outcome{end: orig[:4]}, nil) {
		t.Error("same accepted an end state of another size than the snapshot")
	}
}

func TestBlockHashLimit(t *testing.T) {
	a, b := &blockHash{limit: 3}, &blockHash{}
	for _, id := range []int32{1, 2, 3} {
		a.Block(id)
		b.Block(id)
	}
	if a.h != b.h || a.n != 3 {
		t.Fatalf("hashes %x and %x over 3 blocks", a.h, b.h)
	}
	c := &blockHash{}
	for _, id := range []int32{1, 3, 2} {
		c.Block(id)
	}
	if c.h == b.h {
		t.Errorf("the order of the blocks does not change the hash")
	}
	defer func() {
		if r := recover(); r != errOverrun {
			t.Fatalf("fourth block: recovered %v, want errOverrun", r)
		}
	}()
	a.Block(4)
}

// TestTrimTouched runs the search on the test worker with ballast: i and
// acc are read at every step, the first ballast page never, the second one
// byte per step in stage B, and the third is only written.
func TestTrimTouched(t *testing.T) {
	c := testWorker(4000, "TEST_BALLAST=1")
	p, err := Build(context.Background(), c, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 16
	var last, total int
	q, trims, err := TrimTouched(context.Background(), Local{}, c, p, TouchedOptions{Chunk: chunk, Workers: 1, Progress: func(done, n int) { last, total = done, n }})
	if err != nil {
		t.Fatal(err)
	}
	if last != len(trims) || total != len(trims) {
		t.Errorf("progress ended at %d of %d, want %d of %d", last, total, len(trims), len(trims))
	}
	// Shared out over three workers, the search finds the same.
	q3, trims3, err := TrimTouched(context.Background(), Local{}, c, p, TouchedOptions{Chunk: chunk, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(trims, trims3) {
		t.Fatalf("one worker: %+v\nthree: %+v", trims, trims3)
	}
	for _, tr := range trims {
		a, _ := q.SnapshotBytes(tr.Phase)
		b, _ := q3.SnapshotBytes(tr.Phase)
		if !slices.Equal(a, b) {
			t.Fatalf("phase %d: the snapshots trimmed by one worker and by three differ", tr.Phase)
		}
	}
	if len(trims) == 0 || !strings.Contains(q.Manifest.Reduction, "touched set") {
		t.Fatalf("%d phases trimmed, reduction %q", len(trims), q.Manifest.Reduction)
	}
	for _, tr := range trims {
		ph := p.Manifest.Phases[tr.Phase]
		// The chunks a replay must keep: i and acc, and the chunks of the
		// second page its stage-B steps read.
		keep := map[int]bool{0: true}
		for s := ph.SnapshotStep; s < ph.EndStep; s++ {
			if s%400 >= 200 {
				keep[(16+ballastPage+int(s)%ballastPage)/chunk] = true
			}
		}
		if tr.Err != "" || tr.Raw != 16+3*ballastPage {
			t.Fatalf("phase %d: %+v", ph.ID, tr)
		}
		if want := tr.Raw - int64(chunk*len(keep)); tr.Zeroed != want {
			t.Errorf("phase %d (steps %d-%d): zeroed %d bytes, want %d", ph.ID, ph.SnapshotStep, ph.EndStep, tr.Zeroed, want)
		}
		if tr.After >= tr.Before {
			t.Errorf("phase %d: compressed %d bytes before, %d after", ph.ID, tr.Before, tr.After)
		}
		whole, err := p.SnapshotBytes(tr.Phase)
		if err != nil {
			t.Fatal(err)
		}
		trimmed, err := q.SnapshotBytes(tr.Phase)
		if err != nil {
			t.Fatal(err)
		}
		for i := range whole {
			if keep[i/chunk] && trimmed[i] != whole[i] || !keep[i/chunk] && trimmed[i] != 0 {
				t.Fatalf("phase %d: byte %d is %d, the whole snapshot's %d (kept: %v)", ph.ID, i, trimmed[i], whole[i], keep[i/chunk])
			}
		}
	}
	// The trimmed probe replays every phase without a failure.
	pred, err := Run(context.Background(), q, c, RunOptions{Repeat: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pred.Failed != 0 || pred.Covered < 0.999 {
		t.Fatalf("trimmed probe: %d phases failed, %.3f covered", pred.Failed, pred.Covered)
	}
	// A worker with other arguments reads other data.
	if _, _, err := TrimTouched(context.Background(), Local{}, testWorker(3000, "TEST_BALLAST=1"), p, TouchedOptions{Chunk: chunk}); !errors.As(err, new(*IdentityError)) {
		t.Errorf("other arguments: %v, want an IdentityError", err)
	}
}

// A task whose end state does not repeat from replay to replay cannot be
// searched: every phase is kept whole and says why.
func TestTrimTouchedNotRepeating(t *testing.T) {
	c := testWorker(4000, "TEST_BALLAST=1", "TEST_NONDET=1")
	p, err := Build(context.Background(), c, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, trims, err := TrimTouched(context.Background(), Local{}, c, p, TouchedOptions{Chunk: 16, Workers: -1}) // -1: one at a time
	if err != nil {
		t.Fatal(err)
	}
	if len(trims) == 0 {
		t.Fatal("no phase searched")
	}
	for _, tr := range trims {
		if tr.Zeroed != 0 || tr.Tries != 2 || !strings.Contains(tr.Err, "does not repeat") || tr.After != tr.Before {
			t.Errorf("phase %d: %+v, want it kept whole after 2 replays, saying why", tr.Phase, tr)
		}
		a, _ := p.SnapshotBytes(tr.Phase)
		b, _ := q.SnapshotBytes(tr.Phase)
		if !slices.Equal(a, b) {
			t.Errorf("phase %d: the snapshot changed", tr.Phase)
		}
	}
}
