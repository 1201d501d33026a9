package probe

import (
	"bytes"
	"fmt"
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
		return nil, fmt.Errorf("Restore: %w", err)
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
