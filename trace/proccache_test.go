package trace

import "testing"

func TestProcCache(t *testing.T) {
	type v struct{ n int }
	c := NewProcCache[v](4)
	a, b := &v{1}, &v{2}
	c.Put(0, a)
	c.Put(3, b)
	c.Put(4, a)  // beyond the run's processes: not cached
	c.Put(-1, a) // a negative id: not cached
	for p, want := range map[int32]*v{0: a, 1: nil, 3: b, 4: nil, -1: nil, 1 << 20: nil} {
		if got := c.Get(p); got != want {
			t.Errorf("Get(%d) = %v, want %v", p, got, want)
		}
	}
	if big := NewProcCache[v](1 << 24); len(big.dense) != maxDenseProcs {
		t.Errorf("a cache of 2^24 processes holds %d slots, want %d", len(big.dense), maxDenseProcs)
	}
	var zero ProcCache[v]
	zero.Put(0, a)
	if zero.Get(0) != nil {
		t.Error("the zero cache cached a value")
	}
}
