package probe

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
)

// RoundTrip checks that a task's snapshots are complete: it runs one task
// from newTask to the end, and another for cut steps, snapshots it,
// restores the snapshot into a third, fresh task and runs that one to the
// end. Both runs must take the same number of steps and blocks and end in
// the same state (equal final snapshots); RoundTrip returns the final
// state and an error describing any difference. Worker tests call it.
func RoundTrip(newTask func() Task, cut int64) ([]byte, error) {
	whole := newTask()
	wc := &counter{}
	if err := whole.Init(wc); err != nil {
		return nil, err
	}
	var steps int64
	for done := false; !done; {
		done = whole.Step()
		steps++
	}
	want, err := whole.Snapshot()
	if err != nil {
		return nil, err
	}
	if cut < 0 || cut >= steps {
		return nil, fmt.Errorf("cut %d: the task runs %d steps", cut, steps)
	}
	first := newTask()
	fc := &counter{}
	if err := first.Init(fc); err != nil {
		return nil, err
	}
	for i := int64(0); i < cut; i++ {
		if first.Step() {
			return nil, fmt.Errorf("the task finished after %d steps, before the cut at %d: it is not deterministic", i+1, cut)
		}
	}
	state, err := first.Snapshot()
	if err != nil {
		return nil, err
	}
	second := newTask()
	sc := &counter{}
	if err := second.Init(sc); err != nil {
		return nil, err
	}
	if err := second.Restore(state); err != nil {
		return nil, fmt.Errorf("restoring the snapshot into a new task: %w", err)
	}
	rest := int64(0)
	for done := false; !done; {
		done = second.Step()
		rest++
	}
	if cut+rest != steps || fc.n+sc.n != wc.n {
		return nil, fmt.Errorf("resumed at step %d: %d+%d steps and %d+%d blocks, the uninterrupted run %d steps and %d blocks",
			cut, cut, rest, fc.n, sc.n, steps, wc.n)
	}
	got, err := second.Snapshot()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("resumed at step %d: the final state differs from the uninterrupted run's", cut)
	}
	return want, nil
}

// RestoreAllocs checks that a task restores in place: it snapshots one task
// after steps steps, initialises a second, restores the snapshot into it
// five times in each of five rounds and returns the mean number of heap
// allocations of a Restore in the round that allocated least. A Restore that decodes into the arrays Init made with
// DecodeState allocates at most the struct copy it decodes into (a mean
// of at most 1); every array it replaced would be one more. It also
// checks that the restored task's snapshot equals the saved one. Worker
// tests call it.
func RestoreAllocs(newTask func() Task, steps int) (allocs float64, err error) {
	from, to := newTask(), newTask()
	if err := from.Init(nop{}); err != nil {
		return 0, err
	}
	for i := range steps {
		if from.Step() {
			return 0, fmt.Errorf("the task finished after %d of %d steps", i+1, steps)
		}
	}
	state, err := from.Snapshot()
	if err != nil {
		return 0, err
	}
	if err := to.Init(nop{}); err != nil {
		return 0, err
	}
	// The heap counters are the whole process's: another goroutine (a
	// test's leftovers, the runtime) can only add to a round's count, never
	// take from it, so the least of several rounds is the Restores' own.
	const runs, rounds = 5, 5
	least := uint64(math.MaxUint64)
	for range rounds {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if err := to.Restore(state); err != nil {
				return 0, fmt.Errorf("restoring the snapshot into a new task: %w", err)
			}
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.Mallocs-before.Mallocs)
	}
	got, err := to.Snapshot()
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(got, state) {
		return 0, fmt.Errorf("the restored task's snapshot differs from the saved one")
	}
	return float64(least) / runs, nil
}
