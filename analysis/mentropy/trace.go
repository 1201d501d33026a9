package mentropy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parscope/parscope/trace"
)

// Of says which records of a trace make the event stream.
type Of string

// Streams over a trace.
const (
	// OfEvents reads named events (trace.KindEvent), by event name.
	OfEvents Of = "events"
	// OfStates reads state entries (trace.KindState), by state name.
	OfStates Of = "states"
	// OfRegions reads region entries (trace.KindEnter), by region label.
	OfRegions Of = "regions"
)

// Kind returns the record kind the stream reads.
func (o Of) Kind() (trace.Kind, error) {
	switch o {
	case OfEvents, "":
		return trace.KindEvent, nil
	case OfStates:
		return trace.KindState, nil
	case OfRegions:
		return trace.KindEnter, nil
	}
	return 0, fmt.Errorf("mentropy: unknown stream %q (want events, states or regions)", o)
}

// DroppedEvent is the name of the event the instrument library writes for
// events a filter dropped; it is not part of the event stream.
const DroppedEvent = "parscope.dropped"

// ProbSpec says how a process's event probabilities are made.
type ProbSpec struct {
	Mode ProbMode
	// Table is the Given table by event name.
	Table map[string]float64
	// Normalize scales a Given table that does not sum to 1 (with a
	// warning) instead of failing.
	Normalize bool
}

// Probs builds the probabilities of alphabet a; the warning is non-empty
// when a table was normalised.
func (ps ProbSpec) Probs(a *trace.Dict) (Probs, string, error) {
	switch ps.Mode {
	case Uniform:
		return UniformProbs(len(a.Names())), "", nil
	case Learned:
		return LearnedProbs(len(a.Names())), "", nil
	case Given:
		return GivenFor(a, ps.Table, ps.Normalize)
	}
	return Probs{}, "", fmt.Errorf("mentropy: unknown probability mode %d", ps.Mode)
}

// ProcSeries is the modified entropy series of one process: point i is the
// process's i-th event of the stream.
type ProcSeries struct {
	Run, Proc int32
	// Alphabet names the process's events (ids in order of first appearance).
	Alphabet *trace.Dict
	Events   []int32
	T        []int64 // ns
	Steps    []Step
	// Warning is set when the probability table was normalised.
	Warning string
	w       int
}

// Window returns the W events before point i, most recent first, space
// separated, "*" for none (the paper's "Window" column).
func (s *ProcSeries) Window(i int) string {
	var b strings.Builder
	for j := 1; j <= s.w; j++ {
		if j > 1 {
			b.WriteByte(' ')
		}
		if i-j >= 0 {
			b.WriteString(s.Alphabet.Names()[s.Events[i-j]])
		} else {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// FromTrace computes the series of every process of the records read from
// r (the records of other kinds are ignored; r must give each process's
// records in time order), one ProcSeries per (run, process) in that order.
func FromTrace(ctx context.Context, h *trace.Header, r trace.Reader, of Of, c Config, ps ProbSpec) ([]ProcSeries, error) {
	kind, names, err := setup(h, of, c)
	if err != nil {
		return nil, err
	}
	type key struct{ run, proc int32 }
	idx := map[key]int{}
	var out []ProcSeries
	if err := eachNamed(ctx, r, kind, names, func(rec *trace.Record, name string) error {
		k := key{rec.Run, rec.Proc}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, ProcSeries{Run: rec.Run, Proc: rec.Proc, Alphabet: &trace.Dict{}, w: c.Window})
		}
		s := &out[j]
		s.Events = append(s.Events, s.Alphabet.ID(name))
		s.T = append(s.T, rec.T)
		return nil
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ProcSeries) int {
		if a.Run != b.Run {
			return int(a.Run - b.Run)
		}
		return int(a.Proc - b.Proc)
	})
	for i := range out {
		s := &out[i]
		p, warn, err := ps.Probs(s.Alphabet)
		if err != nil {
			return nil, fmt.Errorf("run %d process %d: %w", s.Run, s.Proc, err)
		}
		s.Warning = warn
		if s.Steps, err = Series(c, p, s.Events, nil); err != nil {
			return nil, fmt.Errorf("run %d process %d: %w", s.Run, s.Proc, err)
		}
	}
	return out, nil
}

// FromNames computes the series of one literal stream of event names (the
// CLI's --stream), as process 0 of run 0 with times 0, 1, 2, ...
func FromNames(stream []string, c Config, ps ProbSpec) (ProcSeries, error) {
	ids, a := Encode(stream)
	s := ProcSeries{Alphabet: a, Events: ids, T: make([]int64, len(ids)), w: c.Window}
	for i := range s.T {
		s.T[i] = int64(i)
	}
	if err := c.Validate(); err != nil {
		return s, err
	}
	p, warn, err := ps.Probs(a)
	if err != nil {
		return s, err
	}
	s.Warning = warn
	s.Steps, err = Series(c, p, ids, nil)
	return s, err
}

// setup checks c and returns the kind of record of reads and the names of
// its ids (dictionary).
func setup(h *trace.Header, of Of, c Config) (trace.Kind, map[int32]string, error) {
	kind, err := of.Kind()
	if err != nil {
		return kind, nil, err
	}
	if err := c.Validate(); err != nil {
		return kind, nil, err
	}
	return kind, dictionary(h, kind), nil
}

// eachNamed calls f with every record of the given kind that r reads, in
// its order, and the record's name (from names, else "KIND ID"), leaving
// out the events named DroppedEvent. It stops at the end of r or at the
// first error: of r, of f, or ctx's.
func eachNamed(ctx context.Context, r trace.Reader, kind trace.Kind, names map[int32]string, f func(rec *trace.Record, name string) error) error {
	buf := make([]trace.Record, 4096)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := r.Read(buf)
		for i := range buf[:n] {
			rec := &buf[i]
			if rec.Kind != kind {
				continue
			}
			name, ok := names[rec.ID]
			if !ok {
				name = fmt.Sprintf("%s %d", kind, rec.ID)
			}
			if kind == trace.KindEvent && name == DroppedEvent {
				continue
			}
			if err := f(rec, name); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

func dictionary(h *trace.Header, k trace.Kind) map[int32]string {
	m := map[int32]string{}
	switch k {
	case trace.KindEvent:
		for _, e := range h.Events {
			m[e.ID] = e.Name
		}
	case trace.KindState:
		for _, s := range h.States {
			if s.Name != "" {
				m[s.ID] = s.Name
			} else {
				m[s.ID] = fmt.Sprintf("state %d", s.ID)
			}
		}
	default:
		for _, r := range h.Regions {
			m[r.ID] = r.Label
		}
	}
	return m
}
