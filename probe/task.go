package probe

// Task is a worker's computation described as state plus a step: the
// application-level checkpointing that long-running HPC codes already do
// with restart files. The driver (Main) calls Init once, then Step until it
// reports done; between two steps it may call Snapshot to save the state,
// and, in a probe run, Restore to replace the state by a saved one and
// continue from there.
//
// A task must be deterministic: from the same state, the same steps execute
// the same blocks. A step should be small against an interval (a few
// hundred steps or more per interval), because the probe can only cut the
// execution between steps.
type Task interface {
	// Init prepares the initial state. b receives the task's basic block
	// entries: the task keeps it and calls b.Block in its steps, from the
	// goroutine that runs Step (as with an instrument.Process, one
	// goroutine at a time).
	Init(b Blocks) error
	// Step executes one step and reports whether the computation is done.
	Step() (done bool)
	// Snapshot returns the whole state needed to continue the computation.
	Snapshot() ([]byte, error)
	// Restore replaces the state by one that Snapshot returned; the
	// following steps continue from there. Init has been called before.
	Restore(state []byte) error
}

// Blocks receives the basic block entries of a task. Block ids must be at
// least 1 (they become the dimensions of basic block vectors, which are
// 1-based as in SimPoint's files). *instrument.Process implements Blocks,
// so the same task code can be recorded into a trace.
type Blocks interface {
	Block(id int32)
}

// Info identifies a worker: a probe is only run by the worker, and version,
// that built it.
type Info struct {
	// Name names the worker ("matmul").
	Name string `json:"name"`
	// Version changes whenever the state a Snapshot holds, or what the
	// steps do, changes.
	Version string `json:"version"`
}

// nop discards block entries: the uninstrumented run.
type nop struct{}

func (nop) Block(int32) {}

// counter counts block entries, and forwards them to next if there is one
// (the instrument library's process in the vector pass). It is the whole
// instrumentation of the reference and probe runs: one increment per block.
type counter struct {
	n    int64
	next Blocks
}

// Block counts one block entry.
func (c *counter) Block(id int32) {
	c.n++
	if c.next != nil {
		c.next.Block(id)
	}
}
