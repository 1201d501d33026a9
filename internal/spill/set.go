package spill

import (
	"encoding/binary"
	"slices"
)

// setKeyCost is what a key costs in a Set's map: the key and the map's
// overhead.
const setKeyCost = 32

// Set counts distinct 64-bit keys (hashes) in memory bounded by a budget:
// past it, the keys in memory are written, sorted, as a run, and Len
// merges the runs to count them. The zero value is not usable; use NewSet.
type Set struct {
	name string
	max  int
	mem  map[uint64]struct{}
	runs *Runs
	keys []uint64
	kbuf []byte
}

// NewSet returns an empty set whose runs are named after name, holding
// at most budget bytes of keys in memory (at least a few keys).
func NewSet(name string, budget int64) *Set {
	return &Set{name: name, max: int(max(budget/setKeyCost, 4)), mem: map[uint64]struct{}{}}
}

// Add adds k.
func (s *Set) Add(k uint64) error {
	if _, ok := s.mem[k]; ok {
		return nil
	}
	s.mem[k] = struct{}{}
	if len(s.mem) > s.max {
		return s.spill()
	}
	return nil
}

// spill writes the keys in memory as a run and clears the map.
func (s *Set) spill() error {
	if s.runs == nil {
		s.runs = New(s.name, func(dst, _ []byte) []byte { return dst })
	}
	s.keys = s.keys[:0]
	for k := range s.mem {
		s.keys = append(s.keys, k)
	}
	slices.Sort(s.keys)
	w, err := s.runs.Create()
	if err != nil {
		return err
	}
	for _, k := range s.keys {
		s.kbuf = binary.BigEndian.AppendUint64(s.kbuf[:0], k)
		if err := w.Add(s.kbuf, nil); err != nil {
			w.Abort()
			return err
		}
	}
	clear(s.mem)
	return w.Close()
}

// Len returns the number of distinct keys added.
func (s *Set) Len() (int, error) {
	if s.runs == nil || s.runs.Len() == 0 {
		return len(s.mem), nil
	}
	if len(s.mem) > 0 {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	n := 0
	err := s.runs.Merge(func(_, _ []byte) error {
		n++
		return nil
	})
	return n, err
}

// Close empties the set and removes its runs; the set can be used again.
func (s *Set) Close() error {
	clear(s.mem)
	if s.runs == nil {
		return nil
	}
	return s.runs.Close()
}
