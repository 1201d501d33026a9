package trace

// maxDenseProcs bounds the slice of a ProcCache: a run that declares more
// processes keeps the ids above in its map only.
const maxDenseProcs = 1 << 16

// ProcCache finds a per-process value by process id with an index into a
// slice, in front of the map of every process an analysis keeps: on the
// path an analysis takes for each record, a look-up costs an index, not a
// hash. The map stays the one that holds the values (and is what the
// analysis iterates); the cache only remembers, for the ids below the
// run's process count (at most 65,536), what the map holds. The zero value
// caches nothing.
type ProcCache[T any] struct {
	dense []*T
}

// NewProcCache returns a cache for a run of procs processes.
func NewProcCache[T any](procs int) ProcCache[T] {
	return ProcCache[T]{dense: make([]*T, min(max(procs, 0), maxDenseProcs))}
}

// Get returns the value cached for process p, or nil.
func (c ProcCache[T]) Get(p int32) *T {
	if uint32(p) < uint32(len(c.dense)) {
		return c.dense[p]
	}
	return nil
}

// Put caches v for process p; ids outside the cache are left out.
func (c ProcCache[T]) Put(p int32, v *T) {
	if uint32(p) < uint32(len(c.dense)) {
		c.dense[p] = v
	}
}
