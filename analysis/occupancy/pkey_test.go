package occupancy

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyLayout checks which accumulators pack their keys, in one word or
// two, and which fall back to string keys.
func TestKeyLayout(t *testing.T) {
	for _, tc := range []struct {
		p, m         int
		packed, wide bool
	}{
		{4, 3, true, false},
		{64, 9, true, false},   // 7 bits × 9 = 63
		{64, 10, true, true},   // 70 bits: two words
		{64, 13, true, true},   // 91 bits, the 13 states of the gengomez traces
		{64, 18, true, true},   // 9 modes a word, 18 in two
		{64, 19, false, false}, // 133 bits
		{1 << 20, 3, true, false},
		{1 << 20, 4, true, true},
		{1 << 20, 6, true, true}, // 21 bits × 6 = 126
		{1 << 20, 7, false, false},
		{0, 5, true, false},
	} {
		acc, err := NewAccumulator(modesOf(tc.m, false), tc.p, 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if acc.packed != tc.packed || tc.packed && acc.lay.wide != tc.wide {
			t.Errorf("%d processes, %d modes: packed %v, two words %v; want %v, %v", tc.p, tc.m, acc.packed, acc.lay.wide, tc.packed, tc.wide)
		}
		acc.tab.close()
	}
}

// TestKeyPacking packs random counts (up to p in every mode, so that every
// field is full) and checks that they unpack to themselves, that keys are
// equal exactly when the counts are, that the key changes by unit(j) per
// process, and that keys order as their encodings do.
func TestKeyPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ p, m int }{{64, 9}, {64, 13}, {64, 18}, {1000, 6}, {1, 64}, {1 << 20, 4}} {
		l, ok := newLayout(tc.m, uint(bits.Len(uint(tc.p))))
		if !ok {
			t.Fatalf("%d processes, %d modes do not pack", tc.p, tc.m)
		}
		var prev []int32
		var prevKey pkey
		for range 2000 {
			counts := make([]int32, tc.m)
			for j := range counts {
				switch rng.IntN(3) {
				case 0:
					counts[j] = int32(tc.p)
				case 1:
					counts[j] = int32(rng.IntN(tc.p + 1))
				}
			}
			k := l.pack(counts)
			if got := l.unpack(k, make([]int32, tc.m)); !slices.Equal(got, counts) {
				t.Fatalf("%d processes, %d modes: %v packs to %x and unpacks to %v", tc.p, tc.m, counts, k, got)
			}
			if len(l.appendKey(nil, k)) != 8+8*b2i(l.wide) {
				t.Fatalf("%d processes, %d modes: a key of %d bytes", tc.p, tc.m, len(l.appendKey(nil, k)))
			}
			if r := l.readKey(l.appendKey(nil, k)); r != k {
				t.Fatalf("%x encodes and decodes to %x", k, r)
			}
			if prev != nil {
				if (k == prevKey) != slices.Equal(counts, prev) {
					t.Fatalf("%v and %v: keys %x and %x", counts, prev, k, prevKey)
				}
				if c, b := k.compare(prevKey), bytes.Compare(l.appendKey(nil, k), l.appendKey(nil, prevKey)); c != b {
					t.Fatalf("%x against %x: compare %d, encodings %d", k, prevKey, c, b)
				}
			}
			for j := range counts {
				if counts[j] < int32(tc.p) {
					u := l.unit(j)
					next := slices.Clone(counts)
					next[j]++
					if want, got := l.pack(next), (pkey{lo: k.lo + u.lo, hi: k.hi + u.hi}); got != want {
						t.Fatalf("%v with one more in mode %d: %x, want %x", counts, j, got, want)
					}
				}
			}
			prev, prevKey = counts, k
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
