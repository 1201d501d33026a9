package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// BatchSize is the number of records read at once and handed to every
// accumulator.
const BatchSize = 4096

// job is one request being run, or, in a pass, the stage that feeds the
// staged accumulators of several.
type job struct {
	a    *Analysis
	opts any
	runs []int32
	// only and skip select processes (nil: no selection); procKey names
	// the selection for grouping.
	only, skip map[int32]bool
	procKey    string
	acc        Accumulator
	kinds      [trace.KindBBV + 1]bool
	// in takes the job's batches: acc, or the stage of a group.
	in interface{ Add([]trace.Record) error }
	// stage is the stage a group's batches go to (nil for a plain job).
	stage Stage
	// all is true when the job takes every record of a batch of timed
	// records of its pass (every timed kind read and every run), and
	// allRuns when it takes every run read, so batches need no filtering.
	all, allRuns bool
	// states keeps, of the state records, the derived ones (keepDerived)
	// or the recorded ones (keepRecorded) when the pass reads derived
	// states; 0 keeps all.
	states  uint8
	scratch []trace.Record
	err     error
}

// Values of job.states.
const (
	keepDerived uint8 = 1 + iota
	keepRecorded
)

// wants reports whether the job is fed r.
func (j *job) wants(r *trace.Record) bool {
	if r.Kind == trace.KindState && j.states != 0 && (r.Flags&trace.FlagDerived != 0) != (j.states == keepDerived) {
		return false
	}
	return int(r.Kind) < len(j.kinds) && j.kinds[r.Kind] && (j.runs == nil || slices.Contains(j.runs, r.Run)) &&
		(j.only == nil || j.only[r.Proc]) && (j.skip == nil || !j.skip[r.Proc])
}

// keep appends to dst the records of recs the job is fed, and returns it.
func (j *job) keep(dst, recs []trace.Record) []trace.Record {
	if j.runs == nil && j.only == nil && j.skip == nil && j.states == 0 {
		// By kind alone: the common case, without wants' other tests.
		for i := range recs {
			if k := recs[i].Kind; int(k) < len(j.kinds) && j.kinds[k] {
				dst = append(dst, recs[i])
			}
		}
		return dst
	}
	for i := range recs {
		if j.wants(&recs[i]) {
			dst = append(dst, recs[i])
		}
	}
	return dst
}

// filterKey names the records of a batch the job takes: jobs of equal
// keys take the same ones.
func (j *job) filterKey() string {
	return fmt.Sprintf("%v|%v|%s|%d", j.kinds, j.runs, j.procKey, j.states)
}

// selectProcs sets the job's process selection from a request.
func (j *job) selectProcs(req Request) {
	set := func(ids []int32) map[int32]bool {
		if len(ids) == 0 {
			return nil
		}
		m := make(map[int32]bool, len(ids))
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	j.only, j.skip = set(req.Procs), set(req.ExcludeProcs)
	if j.only != nil || j.skip != nil {
		j.procKey = fmt.Sprint(slices.Sorted(maps.Keys(j.only)), slices.Sorted(maps.Keys(j.skip)))
	}
}

// feed gives the job the records of b it is fed.
func (j *job) feed(b *batch) error {
	recs := b.recs
	if b.filtered {
		// Filtered for this job (and others that take the same records).
		return j.in.Add(recs)
	}
	if b.bbv {
		// A batch of the BBV table holds BBV records only.
		if !j.kinds[trace.KindBBV] {
			return nil
		}
		if j.allRuns {
			return j.in.Add(recs)
		}
	} else if j.all {
		return j.in.Add(recs)
	}
	j.scratch = j.keep(j.scratch[:0], recs)
	if len(j.scratch) == 0 {
		return nil
	}
	return j.in.Add(j.scratch)
}

// Run runs the requested analyses over src. It reads the records once,
// in batches that every accumulator receives (each in a goroutine of its
// own when there are several), and reads them again only for the
// accumulators that ask for another pass (Repeater). A request of an
// analysis whose record kinds the trace lacks is a *MissingError, and one
// of a trace larger than the analysis handles (Analysis.Limit) a
// *LimitError, both before a record is read; an accumulator's error names
// the trace and the analysis.
func Run(ctx context.Context, src Source, reqs []Request) (*Results, error) {
	src, from, err := statesSource(src, reqs)
	if err != nil {
		return nil, err
	}
	t := TraceOf(src)
	jobs := make([]*job, len(reqs))
	for i, req := range reqs {
		a, opts, err := resolve(t, req)
		if err != nil {
			return nil, err
		}
		acc, err := a.New(t, opts)
		if err != nil {
			return nil, analysisError(t.Name, a.Name, err)
		}
		jobs[i] = newJob(a, opts, req, acc, from)
	}
	res := &Results{}
	for active := jobs; len(active) > 0; {
		fed, err := group(active)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		if err := pass(ctx, src, fed); err != nil {
			return nil, err
		}
		for _, j := range fed {
			if j.stage == nil {
				continue
			}
			if err := j.stage.End(); err != nil {
				return nil, analysisError(t.Name, j.a.Name, err)
			}
		}
		res.Passes++
		var next []*job
		for _, j := range active {
			r, ok := j.acc.(Repeater)
			if !ok {
				continue
			}
			again, err := r.Again()
			if err != nil {
				return nil, analysisError(t.Name, j.a.Name, err)
			}
			if again {
				next = append(next, j)
			}
		}
		active = next
	}
	for i, j := range jobs {
		v, err := j.acc.Result()
		if err != nil {
			return nil, analysisError(t.Name, j.a.Name, err)
		}
		res.Envelopes = append(res.Envelopes, j.envelope(t, reqs[i], from, v))
	}
	return res, nil
}

// newJob returns the job of the request req of the analysis a with the
// options opts, feeding acc, in a run whose states come from from.
func newJob(a *Analysis, opts any, req Request, acc Accumulator, from StatesFrom) *job {
	j := &job{a: a, opts: opts, runs: req.Runs, acc: acc, in: acc}
	j.selectProcs(req)
	for _, k := range a.Kinds(opts) {
		if k.Valid() {
			j.kinds[k] = true
		}
	}
	if j.kinds[trace.KindState] && (from == StatesRegions || from == StatesMPI) {
		j.states = keepDerived
		if a.Recorded {
			j.states = keepRecorded
		}
	}
	return j
}

// envelope wraps v, the result of the job of req over the trace t whose
// states came from from.
func (j *job) envelope(t *Trace, req Request, from StatesFrom, v any) *Envelope {
	env := &Envelope{SchemaVersion: SchemaVersion, Analysis: j.a.Name,
		Trace: t.Name, Runs: j.runs, Procs: req.Procs, ExcludeProcs: req.ExcludeProcs, Options: j.opts, Result: v}
	if j.kinds[trace.KindState] && !j.a.Recorded {
		env.StatesFrom = from
	}
	return env
}

// statesSource returns src with the states the requests ask for (see
// WithStates) and the source picked, when one of them reads states.
// Requests that set States must agree.
func statesSource(src Source, reqs []Request) (Source, StatesFrom, error) {
	t := TraceOf(src)
	from := StatesAuto
	reads := false
	for _, req := range reqs {
		if req.States != "" && req.States != StatesAuto {
			if _, err := ParseStatesFrom(string(req.States)); err != nil {
				return nil, "", err
			}
			if from != StatesAuto && from != req.States {
				return nil, "", fmt.Errorf("%s: states from %s and from %s in one run: run them separately", t.Name, from, req.States)
			}
			from = req.States
		}
		if a, ok := Lookup(req.Analysis); ok {
			opts, _ := a.optionsOf(req.Options) // of another type: the defaults, as resolve refuses it
			reads = reads || (!a.Recorded && slices.Contains(a.Kinds(opts), trace.KindState))
		}
	}
	if !reads {
		return src, "", nil
	}
	return WithStates(src, from)
}

// group returns the jobs a pass feeds: the plain jobs of active, and one
// job per stage, for the staged accumulators of active that share a stage
// key, runs and kinds, whose batches go to one Stage made by the first of
// them (see Staged).
func group(active []*job) ([]*job, error) {
	var out []*job
	groups := map[string]*job{}
	members := map[*job][]*job{}
	for _, j := range active {
		s, ok := j.acc.(Staged)
		if !ok {
			out = append(out, j)
			continue
		}
		key := fmt.Sprintf("%s|%v|%v|%s|%d", s.StageKey(), j.runs, j.kinds, j.procKey, j.states)
		g := groups[key]
		if g == nil {
			g = &job{runs: j.runs, kinds: j.kinds, only: j.only, skip: j.skip, procKey: j.procKey, states: j.states}
			groups[key] = g
			out = append(out, g)
		}
		members[g] = append(members[g], j)
	}
	for g, js := range members {
		var names []string
		var accs []Accumulator
		for _, j := range js {
			names = append(names, j.a.Name)
			accs = append(accs, j.acc)
		}
		g.a = &Analysis{Name: strings.Join(names, ", ")}
		st, err := js[0].acc.(Staged).NewStage(accs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.a.Name, err)
		}
		g.stage, g.in = st, st
	}
	return out, nil
}

// batch is a block of records shared by the accumulators of a pass; the
// last one to finish with it returns it to the pool.
type batch struct {
	recs []trace.Record
	// bbv is true for a batch of the BBV table; filtered for one that
	// holds only the records of a filter group's jobs (sharedFilter).
	bbv, filtered bool
	refs          atomic.Int32
}

var batches = sync.Pool{New: func() any { return &batch{recs: make([]trace.Record, BatchSize)} }}

func (b *batch) release() {
	if b.refs.Add(-1) == 0 {
		batches.Put(b)
	}
}

// pass reads the records the jobs are fed once and feeds them.
func pass(ctx context.Context, src Source, jobs []*job) error {
	var timed []trace.Kind
	bbv := false
	var runs []int32
	allRuns := false
	for _, j := range jobs {
		for k := trace.KindState; k <= trace.KindBBV; k++ {
			if !j.kinds[k] {
				continue
			}
			if k == trace.KindBBV {
				bbv = true
			} else if !slices.Contains(timed, k) {
				timed = append(timed, k)
			}
		}
		if j.runs == nil {
			allRuns = true
		}
		for _, r := range j.runs {
			if !slices.Contains(runs, r) {
				runs = append(runs, r)
			}
		}
	}
	if allRuns {
		runs = nil
	}
	slices.Sort(timed)
	slices.Sort(runs)
	for _, j := range jobs {
		j.allRuns = (j.runs == nil || slices.Equal(j.runs, runs)) && j.procKey == "" && j.states == 0
		j.all = j.allRuns
		for _, k := range timed {
			j.all = j.all && j.kinds[k]
		}
	}
	name := TraceOf(src).Name
	var readers []trace.Reader
	if len(timed) > 0 {
		readers = append(readers, src.Records(store.ReadOptions{Runs: runs, Kinds: timed}))
	}
	bbvAt := -1
	if bbv {
		bbvAt = len(readers)
		readers = append(readers, src.BBV(store.ReadOptions{Runs: runs}))
	}
	if len(jobs) == 1 {
		j := jobs[0]
		err := read(ctx, readers, bbvAt, func(b *batch) error {
			defer b.release()
			if j.err = j.feed(b); j.err != nil {
				return errStop
			}
			return nil
		})
		if j.err != nil {
			return analysisError(name, j.a.Name, j.err)
		}
		return ctxOr(ctx, err, name)
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	consume := func(j *job) chan *batch {
		ch := make(chan *batch, 4)
		wg.Go(func() {
			for b := range ch {
				if j.err == nil {
					if j.err = j.feed(b); j.err != nil {
						failed.Store(true)
					}
				}
				b.release()
			}
		})
		return ch
	}
	// Jobs that filter the batches the same way (comm and the wait
	// states, say, or the state analyses and occupancy) share one
	// filtered copy of each batch instead of each making its own.
	var chans []chan *batch
	filters := map[string][]*job{}
	var keys []string
	for _, j := range jobs {
		if j.all {
			chans = append(chans, consume(j))
			continue
		}
		k := j.filterKey()
		if filters[k] == nil {
			keys = append(keys, k)
		}
		filters[k] = append(filters[k], j)
	}
	for _, k := range keys {
		js := filters[k]
		if len(js) == 1 {
			chans = append(chans, consume(js[0]))
			continue
		}
		outs := make([]chan *batch, len(js))
		for i, j := range js {
			outs[i] = consume(j)
		}
		in := make(chan *batch, 4)
		chans = append(chans, in)
		wg.Go(func() { sharedFilter(js[0], in, outs) })
	}
	err := read(ctx, readers, bbvAt, func(b *batch) error {
		if failed.Load() {
			b.release()
			return errStop
		}
		b.refs.Store(int32(len(chans)))
		for _, ch := range chans {
			ch <- b
		}
		return nil
	})
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return analysisError(name, j.a.Name, j.err)
		}
	}
	return ctxOr(ctx, err, name)
}

// sharedFilter hands each batch from in, filtered as j filters, to outs,
// the channels of jobs that filter as j does, and closes them when in is
// closed. A BBV batch goes to them as it is: each job takes what it wants
// of it.
func sharedFilter(j *job, in chan *batch, outs []chan *batch) {
	defer func() {
		for _, ch := range outs {
			close(ch)
		}
	}()
	for b := range in {
		if b.bbv {
			b.refs.Add(int32(len(outs) - 1))
			for _, ch := range outs {
				ch <- b
			}
			continue
		}
		fb := batches.Get().(*batch)
		fb.recs, fb.bbv, fb.filtered = j.keep(fb.recs[:0], b.recs), false, true
		b.release()
		if len(fb.recs) == 0 {
			fb.filtered = false
			batches.Put(fb)
			continue
		}
		fb.refs.Store(int32(len(outs)))
		for _, ch := range outs {
			ch <- fb
		}
	}
}

// ctxOr returns the error that ended a read, as the caller should see it.
func ctxOr(ctx context.Context, err error, name string) error {
	if err == nil || errors.Is(err, errStop) {
		return ctx.Err()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: %w", name, err)
}

// read reads the readers one after another in batches and hands each
// batch to fn, which owns it (and releases it); the batches of the reader
// at index bbv (-1: none) are marked as BBV batches. It stops at the first
// error of a reader or fn, or when ctx is cancelled.
func read(ctx context.Context, readers []trace.Reader, bbv int, fn func(*batch) error) error {
	for i, rd := range readers {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			b := batches.Get().(*batch)
			b.refs.Store(1)
			b.bbv, b.filtered = i == bbv, false
			n, err := rd.Read(b.recs[:BatchSize])
			if n > 0 {
				// fn owns b from here; its capacity stays BatchSize.
				b.recs = b.recs[:n]
				if ferr := fn(b); ferr != nil {
					return ferr
				}
			} else {
				b.release()
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// analysisError names the trace and the analysis that failed. The
// analysis' own errors often name it already ("mentropy: K = 0 ...", or
// "run 0 process 3: mentropy: ..." further in): the name is then written
// once, at the front, not again inside.
func analysisError(trace, analysis string, err error) error {
	return &namedError{prefix: trace + ": " + analysis + ": ", analysis: analysis, err: err}
}

type namedError struct {
	prefix, analysis string
	err              error
}

func (e *namedError) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), e.analysis+": ")
	return e.prefix + strings.ReplaceAll(msg, ": "+e.analysis+": ", ": ")
}

func (e *namedError) Unwrap() error { return e.err }
