package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// The test binary doubles as a worker: started with EnvDir set (by Build or
// Run in the tests below), TestMain runs testTask under Main instead of the
// tests. Its arguments are "worker STEPS"; the environment variables
// TEST_SNAPSHOT_FAIL, TEST_CRASH (exit in stage B) and TEST_PANIC (panic in
// stage B) inject failures, and TEST_BALLAST adds three pages to the state
// (see ballastPage).

var testInfo = Info{Name: "probe-test-worker", Version: "1"}

func TestMain(m *testing.M) {
	if os.Getenv(EnvDir) != "" {
		steps := 4000
		if len(os.Args) > 2 {
			steps, _ = strconv.Atoi(os.Args[2])
		}
		Main(testInfo, &testTask{steps: steps})
		os.Exit(1) // not reached: Main exits
	}
	os.Exit(m.Run())
}

// testTask alternates stages A (steps i mod 400 < 200: blocks 1, light
// work) and B (blocks 2 and 3, three times the work).
type testTask struct {
	steps        int
	i            int
	acc          uint64
	blk          Blocks
	crash, panic bool
	// ballast, with TEST_BALLAST, is three pages of state after i and
	// acc: the first is never read, the second is read in stage B, the
	// third is written at every step and never read. With TEST_NONDET,
	// Snapshot writes the number of snapshots taken into the ballast's
	// last byte, so that no two replays end in the same state.
	ballast []byte
	nondet  bool
	snaps   byte
}

// ballastPage is the size of one page of the test task's ballast.
const ballastPage = 4096

// Init reads the failure switches once: a lookup in the environment is a
// map access, whose cost varies from process to process with the map's
// random seed, and would make the model machines' times vary.
func (t *testTask) Init(b Blocks) error {
	t.blk, t.i, t.acc = b, 0, 1
	t.crash, t.panic = os.Getenv("TEST_CRASH") != "", os.Getenv("TEST_PANIC") != ""
	t.ballast, t.nondet = nil, os.Getenv("TEST_NONDET") != ""
	if os.Getenv("TEST_BALLAST") != "" {
		t.ballast = make([]byte, 3*ballastPage)
		for k := range 2 * ballastPage {
			t.ballast[k] = byte(k%251) | 1
		}
	}
	return nil
}

func (t *testTask) stageB() bool { return t.i%400 >= 200 }

func (t *testTask) Step() bool {
	work := 2000
	if t.stageB() {
		if t.crash {
			os.Exit(7)
		}
		if t.panic {
			panic("injected failure in stage B")
		}
		work = 6000
		if t.ballast != nil {
			t.acc += uint64(t.ballast[ballastPage+t.i%ballastPage])
		}
		t.blk.Block(2)
		t.blk.Block(2)
		t.blk.Block(3)
		t.blk.Block(3)
	} else {
		for range 4 {
			t.blk.Block(1)
		}
	}
	for k := range work {
		t.acc = t.acc*6364136223846793005 + uint64(k) | 1
	}
	if t.ballast != nil {
		t.ballast[2*ballastPage+t.i%ballastPage] = byte(t.i) | 1
	}
	t.i++
	return t.i == t.steps
}

func (t *testTask) Snapshot() ([]byte, error) {
	if os.Getenv("TEST_SNAPSHOT_FAIL") != "" {
		return nil, errors.New("injected snapshot failure")
	}
	if t.nondet && t.ballast != nil {
		t.snaps++
		t.ballast[len(t.ballast)-1] = t.snaps
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(t.i))
	return append(binary.LittleEndian.AppendUint64(b, t.acc), t.ballast...), nil
}

func (t *testTask) Restore(b []byte) error {
	if len(b) != 16+len(t.ballast) {
		return fmt.Errorf("snapshot of %d bytes, want %d", len(b), 16+len(t.ballast))
	}
	t.i, t.acc = int(binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint64(b[8:])
	copy(t.ballast, b[16:])
	return nil
}

// testWorker is the command that runs the test binary as a worker.
func testWorker(steps int, env ...string) Command {
	return Command{Path: os.Args[0], Args: []string{"worker", strconv.Itoa(steps)}, Env: env}
}
