package probe

// The touched set (Strube 2011, §5.5): a phase's replay reads only part
// of its snapshot, and the rest can be zeroed, after which the snapshot
// compresses to little more than what the replay reads. The thesis traces
// the memory pages the interval touches with Pin and zeroes the others.
// parscope's snapshots are serialised application state, not memory, so
// it cannot trace loads; it finds the untouched parts by trying instead.
// The worker restores the snapshot with a part zeroed, runs the warm-up
// and the interval, and the part counts as untouched when the run is the
// same: the same sequence of basic blocks, and the same state at its end,
// byte for byte, except that a zeroed byte the run left alone is still
// zero. A part the run reads changes one of the two (its control flow, or
// a value it computes), unless what it read made no difference to either.
// The search halves the parts that fail down to a chunk (4 KiB by
// default, the thesis's page), always trying the new part together with
// every part already zeroed, so the last accepted trial is the trimmed
// snapshot itself.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// DefaultChunk is the touched-set search's default granularity: the 4 KiB
// page of the thesis's traces.
const DefaultChunk = 4096

// span is a byte range [lo, hi) of a state.
type span struct{ lo, hi int }

// untouched returns the spans of a state of n bytes that try accepts
// zeroed together, searching from the whole state down to chunks of
// chunk bytes (aligned to multiples of chunk), and the number of tries.
// try is called with the spans already accepted followed by the candidate,
// in ascending order; it must not keep the slice.
func untouched(n, chunk int, try func(z []span) bool) (z []span, tries int) {
	var search func(lo, hi int)
	search = func(lo, hi int) {
		if lo >= hi {
			return
		}
		tries++
		cand := append(z[:len(z):len(z)], span{lo, hi})
		if try(cand) {
			z = mergeSpan(z, span{lo, hi})
			return
		}
		chunks := (hi - lo + chunk - 1) / chunk
		if chunks <= 1 {
			return
		}
		mid := lo + chunks/2*chunk
		search(lo, mid)
		search(mid, hi)
	}
	search(0, n)
	return z, tries
}

// mergeSpan appends s, which lies after every span of z, joining it to the
// last when they meet.
func mergeSpan(z []span, s span) []span {
	if k := len(z) - 1; k >= 0 && z[k].hi == s.lo {
		z[k].hi = s.hi
		return z
	}
	return append(z, s)
}

// zeroed copies state into buf (grown as needed) with the spans z zeroed.
func zeroed(buf, state []byte, z []span) []byte {
	buf = append(buf[:0], state...)
	for _, s := range z {
		clear(buf[s.lo:s.hi])
	}
	return buf
}

// outcome is what one replay of a phase did: the state at its end, and
// the number and a hash of the blocks it executed.
type outcome struct {
	end      []byte
	blocks   int64
	interval int64 // of blocks, the interval's
	hash     uint64
}

// same reports whether got, the replay of orig with the spans z zeroed,
// did what ref, the replay of orig, did: the same blocks, and the same end
// state, where a zeroed byte may instead still be zero if ref left it as
// orig had it.
func same(orig []byte, ref, got outcome, z []span) bool {
	if got.blocks != ref.blocks || got.hash != ref.hash || len(got.end) != len(ref.end) || len(ref.end) != len(orig) {
		return false
	}
	prev := 0
	for _, s := range z {
		if !bytes.Equal(got.end[prev:s.lo], ref.end[prev:s.lo]) {
			return false
		}
		for i := s.lo; i < s.hi; i++ {
			if g := got.end[i]; g != ref.end[i] && (g != 0 || ref.end[i] != orig[i]) {
				return false
			}
		}
		prev = s.hi
	}
	return bytes.Equal(got.end[prev:], ref.end[prev:])
}

// blockHash hashes the block sequence (FNV-1a over the ids) and stops a
// run that executes more than limit blocks: a zeroed loop bound must not
// make a trial run for ever.
type blockHash struct {
	h     uint64
	n     int64
	limit int64
}

// errOverrun is the panic of a trial that ran past its block limit.
var errOverrun = errors.New("the trial ran past its block limit")

// Block implements Blocks.
func (b *blockHash) Block(id int32) {
	b.h = (b.h ^ uint64(uint32(id))) * 1099511628211
	b.n++
	if b.limit > 0 && b.n > b.limit {
		panic(errOverrun)
	}
}

// replayOnce restores state, runs the phase's warm-up and interval and
// returns what they did. A panic of the task is an error.
func replayOnce(task Task, h *blockHash, ph replayPhase, state []byte, limit int64) (o outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if err := task.Restore(state); err != nil {
		return o, fmt.Errorf("restoring the snapshot: %w", err)
	}
	*h = blockHash{h: 14695981039346656037, limit: limit}
	if err := steps(task, ph.WarmSteps); err != nil {
		return o, fmt.Errorf("warm-up: %w", err)
	}
	warm := h.n
	if err := steps(task, ph.Steps); err != nil {
		return o, fmt.Errorf("interval: %w", err)
	}
	o.blocks, o.interval, o.hash = h.n, h.n-warm, h.h
	end, err := task.Snapshot()
	if err != nil {
		return o, fmt.Errorf("taking the end state: %w", err)
	}
	o.end = bytes.Clone(end)
	return o, nil
}

// runTouched is the touched-set search of every phase of cfg.Replay.
func runTouched(dir string, info Info, task Task, cfg *childConfig, res *childResult) error {
	if info != cfg.Expect {
		return fmt.Errorf("the probe is for worker %q version %q; this worker is %q version %q",
			cfg.Expect.Name, cfg.Expect.Version, info.Name, info.Version)
	}
	if cfg.Chunk < 1 || len(cfg.TouchedFiles) != len(cfg.Replay) {
		return fmt.Errorf("touched-set search: chunk %d, %d files for %d phases", cfg.Chunk, len(cfg.TouchedFiles), len(cfg.Replay))
	}
	h := &blockHash{}
	if err := task.Init(h); err != nil {
		return fmt.Errorf("task initialisation: %w", err)
	}
	states, errs := loadSnapshots(dir, cfg.Replay, true)
	for i, ph := range cfg.Replay {
		r := touchedResult{Phase: ph.Phase}
		trimmed, err := states[i], errs[i]
		if err == nil {
			trimmed, r.Zeroed, r.Tries, err = trimPhase(task, h, ph, states[i], cfg.Chunk)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, cfg.TouchedFiles[i]), trimmed, 0o644)
		}
		if err != nil {
			r.Err = err.Error()
		}
		res.Touched = append(res.Touched, r)
	}
	return nil
}

// trimPhase zeroes what the phase's replay does not read of state.
func trimPhase(task Task, h *blockHash, ph replayPhase, state []byte, chunk int) (trimmed []byte, zeroedBytes int64, tries int, err error) {
	buf := zeroed(nil, state, nil)
	ref, err := replayOnce(task, h, ph, buf, 0)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("replay of the whole snapshot: %w", err)
	}
	if ref.interval != ph.Blocks {
		return nil, 0, 0, fmt.Errorf("the interval executed %d blocks, the reference %d: the worker is not deterministic", ref.interval, ph.Blocks)
	}
	if len(ref.end) != len(state) {
		return nil, 0, 1, fmt.Errorf("the state's size changes over the interval (%d bytes to %d), so its bytes cannot be matched position by position: kept whole", len(state), len(ref.end))
	}
	// A search needs replays that repeat: an end state that differs
	// between two replays of the same snapshot (a map encoded in its
	// random order, a time) would fail every trial.
	again, err := replayOnce(task, h, ph, zeroed(buf, state, nil), 0)
	if err != nil || !same(state, ref, again, nil) {
		return nil, 0, 2, errors.New("two replays of the whole snapshot ended in different states: the task's Snapshot does not repeat; kept whole")
	}
	limit := 2*ref.blocks + 1024
	z, tries := untouched(len(state), chunk, func(z []span) bool {
		buf = zeroed(buf, state, z)
		got, err := replayOnce(task, h, ph, buf, limit)
		return err == nil && same(state, ref, got, z)
	})
	for _, s := range z {
		zeroedBytes += int64(s.hi - s.lo)
	}
	return zeroed(nil, state, z), zeroedBytes, tries + 2, nil
}

// TouchedPhase is the touched-set search's result for one phase.
type TouchedPhase struct {
	// Phase is the index in the manifest.
	Phase int `json:"phase"`
	// Raw is the snapshot's size, Zeroed the bytes zeroed, and Tries the
	// replays the search made.
	Raw    int64 `json:"raw_bytes"`
	Zeroed int64 `json:"zeroed_bytes"`
	Tries  int   `json:"tries"`
	// Before and After are the compressed sizes.
	Before int64 `json:"before_bytes"`
	After  int64 `json:"after_bytes"`
	// Err says why nothing was zeroed, when the search failed.
	Err string `json:"error,omitempty"`
}

// TouchedOptions say how TrimTouched searches.
type TouchedOptions struct {
	// Chunk is the smallest part of a snapshot tried, in bytes (0:
	// DefaultChunk).
	Chunk int
	// Workers is the number of worker processes searching at once, one
	// phase each (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is told the phases searched of the total.
	Progress func(done, total int)
}

// TrimTouched returns a copy of p in which each kept snapshot holds zeros
// wherever its phase's replay (restore, warm-up, interval) does not read
// it, found by running the worker c on this machine with l. A phase whose
// search fails keeps its snapshot whole, and its TouchedPhase says why.
// The replays of the trimmed probe do the same work on the same values as
// p's.
func TrimTouched(ctx context.Context, l Local, c Command, p *Probe, o TouchedOptions) (*Probe, []TouchedPhase, error) {
	chunk := cmp.Or(o.Chunk, DefaultChunk)
	if chunk < 1 {
		return nil, nil, fmt.Errorf("touched set: chunk %d bytes: want at least 1", chunk)
	}
	// What a replay reads depends on the arguments (the problem's size).
	if !slices.Equal(p.Manifest.Worker.Args, c.Args) {
		return nil, nil, &IdentityError{What: "arguments", Probe: fmt.Sprintf("%q", p.Manifest.Worker.Args), Worker: fmt.Sprintf("%q", c.Args)}
	}
	var phases []int
	for ix, ph := range p.Manifest.Phases {
		if ph.Snapshot != nil {
			phases = append(phases, ix)
		}
	}
	if len(phases) == 0 {
		return nil, nil, errors.New("touched set: the probe carries no snapshot")
	}
	if l.TempDir == "" {
		l.TempDir = memoryTempDir()
	}
	// One worker process per phase, Workers at a time: the phases' searches
	// differ in length by tens of times.
	workers := min(max(cmp.Or(o.Workers, runtime.GOMAXPROCS(0)), 1), len(phases))
	results := make([]touchedResult, len(phases))
	states := make([][]byte, len(phases))
	errs := make([]error, len(phases))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, workers)
	// The largest compressed snapshots first: they hold the most
	// non-zero data, and their searches tend to be the longest.
	order := make([]int, len(phases))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(p.Manifest.Phases[phases[b]].Snapshot.Size, p.Manifest.Phases[phases[a]].Snapshot.Size)
	})
	var wg sync.WaitGroup
	for _, i := range order {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i], states[i], errs[i] = l.touched(ctx, c, p, chunk, phases[i])
			if o.Progress != nil {
				mu.Lock()
				defer mu.Unlock()
				done++
				o.Progress(done, len(phases))
			}
		})
	}
	wg.Wait()
	// The first phase's error: a worker that cannot search fails every
	// phase the same way.
	if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
		err := errs[i]
		if strings.Contains(err.Error(), `unknown mode "`+modeTouched+`"`) {
			return nil, nil, fmt.Errorf("touched set: %w (the worker's probe driver predates the touched-set search: rebuild it)", err)
		}
		return nil, nil, fmt.Errorf("touched set: %w", err)
	}
	q := p.Clone()
	out := make([]TouchedPhase, len(phases))
	var zeroedAll, rawAll int64
	for i, ix := range phases {
		r := results[i]
		s := p.Manifest.Phases[ix].Snapshot
		t := TouchedPhase{Phase: ix, Raw: s.RawSize, Before: s.Size, After: s.Size, Tries: r.Tries, Err: r.Err}
		rawAll += s.RawSize
		if r.Err == "" && r.Zeroed > 0 {
			if int64(len(states[i])) != s.RawSize {
				return nil, nil, fmt.Errorf("touched set: phase %d: the worker wrote %d bytes for a snapshot of %d", p.Manifest.Phases[ix].ID, len(states[i]), s.RawSize)
			}
			if err := q.SetSnapshot(ix, states[i]); err != nil {
				return nil, nil, err
			}
			t.Zeroed, t.After = r.Zeroed, q.Manifest.Phases[ix].Snapshot.Size
			zeroedAll += r.Zeroed
		}
		out[i] = t
	}
	note := fmt.Sprintf("touched set: zeroed %d of %d snapshot bytes that the replays do not read (chunks of %d bytes)", zeroedAll, rawAll, chunk)
	q.Manifest.Reduction = strings.TrimPrefix(q.Manifest.Reduction+"; "+note, "; ")
	return q, out, nil
}

// touched runs the touched-set search of phase ix of p in one worker
// process, and returns its result and, when it zeroed anything, the
// trimmed state.
func (l Local) touched(ctx context.Context, c Command, p *Probe, chunk, ix int) (touchedResult, []byte, error) {
	ph := p.Manifest.Phases[ix]
	rp := replayOf(p, ix, "phase.bin")
	rp.RawSize = ph.Snapshot.RawSize
	cfg := &childConfig{Mode: modeTouched, Expect: p.Manifest.Worker.Info, Chunk: chunk, TouchedFiles: []string{"touched.bin"},
		Replay: []replayPhase{rp}}
	res, dir, err := l.result(ctx, c, cfg, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, cfg.Replay[0].File), p.blob(ix), 0o644)
	})
	if err != nil {
		return touchedResult{}, nil, fmt.Errorf("phase %d: %w", ph.ID, err)
	}
	defer os.RemoveAll(dir)
	if len(res.Touched) != 1 {
		return touchedResult{}, nil, fmt.Errorf("phase %d: the worker answered for %d phases", ph.ID, len(res.Touched))
	}
	r := res.Touched[0]
	if r.Err != "" || r.Zeroed == 0 {
		return r, nil, nil
	}
	st, err := os.ReadFile(filepath.Join(dir, cfg.TouchedFiles[0]))
	if err != nil {
		return touchedResult{}, nil, fmt.Errorf("phase %d: %w", ph.ID, err)
	}
	return r, st, nil
}
