package mentropy

import (
	"encoding/json"
	"errors"
	"fmt"
)

// snapshot is what a mentropy accumulator holds after a pass: after the
// first, each process's length and alphabet; after the second, each
// process's series.
type snapshot struct {
	Pass  int            `json:"pass"`
	Procs []procSnapshot `json:"procs"`
}

type procSnapshot struct {
	Run      int32    `json:"run"`
	Proc     int32    `json:"proc"`
	Events   int      `json:"events"`
	Alphabet []string `json:"alphabet,omitempty"`
	// Series and Next are the series of the second pass and the events
	// stepped through.
	Series *Proc `json:"series,omitempty"`
	Next   int   `json:"next"`
}

// MarshalBinary implements engine.Portable, after the first pass (the
// counts of processes another accumulator may continue) or after the
// second (the series, whose phases end: an accumulator of other
// processes merges into it). An event's entropy depends on every event of
// its process before it, so a distributed face cuts the trace by process
// and runs both passes on each part.
func (a *analysis) MarshalBinary() ([]byte, error) {
	if a.pass == 1 {
		return nil, errors.New("mentropy: an accumulator does not travel in its second pass")
	}
	s := snapshot{Pass: a.pass, Procs: make([]procSnapshot, 0, len(a.order))}
	for _, pa := range a.order {
		ps := procSnapshot{Run: pa.out.Run, Proc: pa.out.Proc, Events: pa.out.Events, Next: pa.next}
		if a.pass == 0 {
			ps.Alphabet = pa.alphabet.Names()
		} else {
			if pa.phases != nil {
				pa.out.Phases, pa.phases = pa.phases.end(), nil
			}
			ps.Series = &pa.out
		}
		s.Procs = append(s.Procs, ps)
	}
	return json.Marshal(s)
}

// UnmarshalBinary implements engine.Portable.
func (a *analysis) UnmarshalBinary(data []byte) error {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("mentropy: decoding an accumulator: %w", err)
	}
	if s.Pass != 0 && s.Pass != 2 {
		return fmt.Errorf("mentropy: decoding an accumulator of pass %d", s.Pass)
	}
	a.pass, a.procs, a.order, a.last = s.Pass, map[procKey]*procAcc{}, nil, nil
	for _, ps := range s.Procs {
		pa := &procAcc{out: Proc{Run: ps.Run, Proc: ps.Proc, Events: ps.Events}, next: ps.Next}
		names := ps.Alphabet
		if s.Pass == 2 {
			if ps.Series == nil {
				return errors.New("mentropy: decoding an accumulator: a process without its series")
			}
			pa.out, names = *ps.Series, ps.Series.Alphabet
		}
		for _, name := range names {
			pa.alphabet.ID(name)
		}
		k := procKey{ps.Run, ps.Proc}
		if a.procs[k] != nil {
			return fmt.Errorf("mentropy: decoding an accumulator: run %d process %d twice", k.run, k.proc)
		}
		a.procs[k] = pa
		a.order = append(a.order, pa)
	}
	return nil
}
