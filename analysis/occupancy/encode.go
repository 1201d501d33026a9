package occupancy

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"slices"
)

// accState is an Accumulator's state in exported fields, for gob.
type accState struct {
	P         int
	T0        int64
	Trace     bool
	Start     string
	Top       int
	Stream    bool
	Budget    int64
	Now, MaxT int64
	Records   int64
	Micro     int64

	Mode       []int32
	Counts     []int32
	Unknown    int
	Since      []int64
	Local      []int64
	UnknownDur []int64
	FirstRow   []int32

	Prefix []prefixState
	Table  []Macro
	// FirstSeen is the first appearance of each row of Table (ns).
	FirstSeen []int64
	Rows      []Row
	NRows     int64
	HasCur    bool
	CurIdx    int // table index of the current T2 row
	CurCnt    []int32
	First     []int32
}

type prefixState struct {
	T, Dur, Micro int64
	Counts        []int32
}

// MarshalBinary encodes the accumulator, so that the accumulator of a time
// shard computed on one machine can be merged on another
// (UnmarshalAccumulator, then Merge). An accumulator with Options.Micro
// cannot be encoded.
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	if a.opts.Micro != nil {
		return nil, errors.New("occupancy: an accumulator with a microstate callback cannot be encoded")
	}
	a.sync()
	st := accState{P: a.p, T0: a.t0, Trace: a.opts.Trace, Start: a.opts.Start, Top: a.opts.Top, Stream: a.opts.Stream, Budget: a.opts.Budget, Now: a.now, MaxT: a.maxT,
		Records: a.records, Micro: a.micro, Mode: a.mode, Counts: a.counts, Unknown: a.unknown,
		Since: a.since, Local: a.local, UnknownDur: a.unknownDur, FirstRow: a.firstRow,
		Rows: a.trace, NRows: a.rows, HasCur: a.hasCur, CurCnt: slices.Clone(a.current()), First: a.first, CurIdx: -1}
	// The whole table, spilled runs included (each leaves it in runs).
	err := a.tab.each(func(counts []int32, _ []byte, occ, first int64) error {
		if a.hasCur && slices.Equal(counts, st.CurCnt) {
			st.CurIdx = len(st.Table)
		}
		st.Table = append(st.Table, Macro{Counts: slices.Clone(counts), Occupancy: occ})
		st.FirstSeen = append(st.FirstSeen, first)
		return nil
	})
	if a.hasCur {
		a.cur = a.tab.entry(st.CurCnt, a.curKey, later)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range a.prefix {
		st.Prefix = append(st.Prefix, prefixState{T: r.t, Dur: r.dur, Micro: r.micro, Counts: r.counts})
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&st); err != nil {
		return nil, fmt.Errorf("occupancy: encoding an accumulator: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalAccumulator decodes an accumulator MarshalBinary encoded, for
// the same modes, with the same options (its memory budget included). Accumulators to be merged must be decoded with the same
// *Modes. Data that is not a consistent accumulator is an error.
func UnmarshalAccumulator(data []byte, modes *Modes) (*Accumulator, error) {
	var st accState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return nil, fmt.Errorf("occupancy: decoding an accumulator: %w", err)
	}
	a, err := NewAccumulator(modes, st.P, st.T0, Options{Trace: st.Trace, Start: st.Start, Top: st.Top, Stream: st.Stream, Budget: st.Budget})
	if err != nil {
		return nil, err
	}
	p, m := a.p, a.m
	bad := len(st.Mode) != p || len(st.Counts) != m || len(st.Since) != p || len(st.Local) != p*m ||
		len(st.UnknownDur) != p || len(st.FirstRow) != p || st.Unknown < 0 || st.Unknown > p ||
		len(st.CurCnt) != m || (st.First != nil && len(st.First) != m) || len(st.FirstSeen) != len(st.Table) ||
		(st.HasCur && (st.CurIdx < 0 || st.CurIdx >= len(st.Table)))
	for _, k := range st.Mode {
		bad = bad || k < absentMode || int(k) >= m
	}
	for _, e := range st.Table {
		bad = bad || len(e.Counts) != m
	}
	for _, r := range st.Prefix {
		bad = bad || len(r.Counts) != m
	}
	if bad {
		return nil, fmt.Errorf("occupancy: an encoded accumulator of %d processes and %d modes is inconsistent", st.P, m)
	}
	a.now, a.maxT, a.records, a.micro = st.Now, st.MaxT, st.Records, st.Micro
	a.mode, a.counts, a.unknown = st.Mode, st.Counts, st.Unknown
	a.key = a.packKey(a.counts)
	a.since, a.local, a.unknownDur, a.firstRow = st.Since, st.Local, st.UnknownDur, st.FirstRow
	for _, r := range st.Prefix {
		a.prefix = append(a.prefix, prefixRow{t: r.T, dur: r.Dur, micro: r.Micro, counts: r.Counts})
	}
	a.trace, a.rows, a.first = st.Rows, st.NRows, st.First
	// Rebuild the table and the current row's entry.
	for i, e := range st.Table {
		key := a.packKey(e.Counts)
		if a.tab.has(e.Counts, key) {
			a.tab.close()
			return nil, fmt.Errorf("occupancy: an encoded accumulator lists macrostate %v twice", e.Counts)
		}
		a.tab.merge(e.Counts, key, e.Occupancy, st.FirstSeen[i])
	}
	a.hasCur = st.HasCur
	if a.hasCur {
		cnt := st.Table[st.CurIdx].Counts
		copy(a.curCnt, cnt)
		a.curKey = a.packKey(cnt)
		a.cur = a.tab.entry(cnt, a.curKey, later)
	}
	if a.tab.err != nil {
		a.tab.close()
		return nil, a.tab.err
	}
	if !slices.Equal(a.counts, st.Counts) {
		return nil, errors.New("occupancy: internal error decoding the counts")
	}
	return a, nil
}
