package mentropy

import (
	"context"
	"fmt"
	"slices"

	"github.com/parscope/parscope/trace"
)

// Stream describes one process's stream as EachStep reads it.
type Stream struct {
	Run, Proc int32
	// Alphabet names the process's events (ids in order of first appearance).
	Alphabet *trace.Dict
	// Events is the length of the stream.
	Events int
	// Warning is set when the probability table was normalised.
	Warning string
}

// EachStep computes the series FromTrace computes, without keeping them:
// a first pass over open() learns each process's alphabet and length, a
// second feeds every event to its process's Meter and calls fn with the
// stream, the event's index in it, its time and its step. Memory grows
// with the processes and their alphabets, not with the events. It returns
// the streams in (run, process) order.
func EachStep(ctx context.Context, h *trace.Header, open func() trace.Reader, of Of, c Config, ps ProbSpec, fn func(s *Stream, i int, t int64, st Step) error) ([]*Stream, error) {
	kind, names, err := setup(h, of, c)
	if err != nil {
		return nil, err
	}
	type key struct{ run, proc int32 }
	idx := map[key]*Stream{}
	var out []*Stream
	// each calls f with every record of the stream, its process's Stream
	// and the event's name.
	each := func(f func(s *Stream, rec *trace.Record, name string) error) error {
		return eachNamed(ctx, open(), kind, names, func(rec *trace.Record, name string) error {
			k := key{rec.Run, rec.Proc}
			s := idx[k]
			if s == nil {
				s = &Stream{Run: rec.Run, Proc: rec.Proc, Alphabet: &trace.Dict{}}
				idx[k] = s
				out = append(out, s)
			}
			return f(s, rec, name)
		})
	}
	if err := each(func(s *Stream, _ *trace.Record, name string) error {
		s.Alphabet.ID(name)
		s.Events++
		return nil
	}); err != nil {
		return nil, err
	}
	type meter struct {
		m *Meter
		i int
	}
	meters := map[*Stream]*meter{}
	for _, s := range out {
		p, warn, err := ps.Probs(s.Alphabet)
		if err != nil {
			return nil, fmt.Errorf("run %d process %d: %w", s.Run, s.Proc, err)
		}
		s.Warning = warn
		m, err := NewMeter(c, p)
		if err != nil {
			return nil, fmt.Errorf("run %d process %d: %w", s.Run, s.Proc, err)
		}
		meters[s] = &meter{m: m}
	}
	err = each(func(s *Stream, rec *trace.Record, name string) error {
		m := meters[s]
		if m == nil || m.i >= s.Events {
			return fmt.Errorf("run %d process %d: the stream changed between the two passes (more than %d events)", s.Run, s.Proc, s.Events)
		}
		st, err := m.m.Next(s.Alphabet.ID(name))
		if err != nil {
			return fmt.Errorf("run %d process %d: event %d of the stream: %w", s.Run, s.Proc, m.i, err)
		}
		if err := fn(s, m.i, rec.T, st); err != nil {
			return err
		}
		m.i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *Stream) int {
		if a.Run != b.Run {
			return int(a.Run - b.Run)
		}
		return int(a.Proc - b.Proc)
	})
	return out, nil
}
