package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/internal/needtool"
)

func TestMachineCost(t *testing.T) {
	m := Machine{Name: "t", GHz: 2, CPI: 0.5, L1Miss: 10, LLMiss: 100,
		I1: Cache{32 << 10, 8, 64}, D1: Cache{32 << 10, 8, 64}, LL: Cache{1 << 20, 16, 64}}
	e := Events{Ir: 1000, Dr: 400, Dw: 100, I1mr: 1, D1mr: 20, D1mw: 9, ILmr: 1, DLmr: 3, DLmw: 1}
	// 0.5·1000 + 10·30 + 100·5 = 500 + 300 + 500 = 1300 cycles; 650 ns at 2 GHz.
	if got := m.Cycles(e); got != 1300 {
		t.Errorf("Cycles = %g, want 1300", got)
	}
	if got := m.Time(e); got != 650*time.Nanosecond {
		t.Errorf("Time = %v, want 650ns", got)
	}
	if err := m.check(); err != nil {
		t.Errorf("check: %v", err)
	}
	bad := m
	bad.D1 = Cache{48 << 10, 8, 64} // 96 sets
	if err := bad.check(); err == nil || !strings.Contains(err.Error(), "96 sets") {
		t.Errorf("check of a 96-set cache: %v, want an error naming 96 sets", err)
	}
	for _, mm := range ModelMachines {
		if err := mm.check(); err != nil {
			t.Errorf("ModelMachines: %v", err)
		}
	}
}

func TestReadCallgrindTotals(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cg.1.1")
	os.WriteFile(p, []byte("version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nfn=(1) x\n0 5\nsummary: 9 9\ntotals: 6309 79 39 1 0 0 1\n"), 0o644)
	e, err := ReadCallgrindTotals(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Events{Ir: 6309, Dr: 79, Dw: 39, I1mr: 1, ILmr: 1}); e != want {
		t.Errorf("events %+v, want %+v", e, want)
	}
	os.WriteFile(p, []byte("events: Ir\ntotals: 12 x\n"), 0o644)
	if _, err := ReadCallgrindTotals(p); err == nil || !strings.Contains(err.Error(), p+":2: 2 totals for 1 events") {
		t.Errorf("two totals for one event: %v", err)
	}
	os.WriteFile(p, []byte("events: Ir\nfn=x\n"), 0o644)
	if _, err := ReadCallgrindTotals(p); err == nil || !strings.Contains(err.Error(), p+":2: no totals line") {
		t.Errorf("no totals: %v", err)
	}
}

// needValgrind skips a test on a platform without valgrind client
// requests, and otherwise asks internal/needtool for valgrind: a skip on a
// developer machine without it, a failure where tools are required.
func needValgrind(t *testing.T) {
	t.Helper()
	if !vgSupported {
		t.Skip("valgrind client requests are implemented on amd64 only")
	}
	needtool.Path(t, "valgrind", "valgrind")
}

func TestModelClockNeedsValgrind(t *testing.T) {
	_, err := Local{Clock: ModelClock}.Plain(context.Background(), testWorker(100))
	if err == nil || !strings.Contains(err.Error(), "under valgrind") {
		t.Fatalf("a model-clock run outside valgrind: %v, want an error saying it needs valgrind", err)
	}
}

// TestValgrindBackend builds a probe of the test worker on the model
// machine ref and runs it on small. The test worker is compute-bound
// (next to no cache misses), so small's time is ref's times the ratio of
// their ns per instruction, (0.6/2)/(0.4/3) = 2.25, and the probe must
// predict it.
func TestValgrindBackend(t *testing.T) {
	needValgrind(t)
	ctx := context.Background()
	ref, small := ModelMachines[0], ModelMachines[1]
	w := testWorker(1200)
	rs, ev, err := Valgrind{Machine: ref}.PlainEvents(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if got := ref.Time(ev); rs.Elapsed != got {
		t.Errorf("modelled time %v, the cost model of its events %v", rs.Elapsed, got)
	}
	if rs.Steps != 1200 || ev.Ir < 1e7 {
		t.Errorf("%d steps, %d instructions: want 1200 steps and at least 10⁷ instructions", rs.Steps, ev.Ir)
	}
	p, err := Build(ctx, w, BuildOptions{Backend: Valgrind{Machine: ref}, Clock: ModelClock, Intervals: 40, RefRuns: 1, Repeat: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest.Clock != ModelClock {
		t.Errorf("manifest clock %q, want model", p.Manifest.Clock)
	}
	actual, err := Valgrind{Machine: small}.Plain(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if r := actual.Elapsed.Seconds() / rs.Elapsed.Seconds(); r < 2.25*0.99 || r > 2.25*1.01 {
		t.Errorf("small/ref = %.4f, want 2.25 ± 1%%", r)
	}
	pred, err := Run(ctx, p, w, RunOptions{Backend: Valgrind{Machine: small}, Repeat: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := pred.Predicted/actual.Elapsed.Seconds() - 1; e < -0.02 || e > 0.02 {
		t.Errorf("predicted %.6f s, actual %.6f s: error %+.2f%%, want within 2%%", pred.Predicted, actual.Elapsed.Seconds(), 100*e)
	}
	probed := 0.0
	for _, ph := range pred.Phases {
		if ph.Status == "ok" && ph.Samples != 1 {
			t.Errorf("phase %d: %d samples, want 1 (one round on a model machine)", ph.ID, ph.Samples)
		}
		probed += ph.TProbed
	}
	// The worker's stages in instructions and in small's time: one round,
	// which restores, warms up and times every phase, so it takes longer
	// than the timed intervals; the later rounds are none, so what is
	// counted after the first round is the loop's exit and whatever the Go
	// runtime does meanwhile (a few hundred instructions to a collection:
	// 1.2 µs of small's time was seen), far under 1% of the first round.
	c := pred.Costs
	if c == nil || c.RoundsMade != 1 {
		t.Fatalf("costs %+v: want one round", c)
	}
	for _, st := range []string{"Start", "Init", "Load", "FirstRound"} {
		if c.Instructions[st] <= 0 {
			t.Errorf("stage %s: %d instructions, want some", st, c.Instructions[st])
		}
	}
	if c.FirstRound <= probed || c.Rounds > c.FirstRound/100 {
		t.Errorf("first round %g s, later rounds %g s: want more than the timed intervals' %g s, and next to nothing", c.FirstRound, c.Rounds, probed)
	}
}

// stackStart is what padLayout keeps a multiple of layoutBytes: the
// strings a process started with argv and env finds at the top of its
// stack (AT_EXECFN repeats argv[0]) and the pointers to them.
func stackStart(argv, env []string) int {
	n := len(argv[0]) + 1
	for _, s := range append(append([]string{}, argv...), env...) {
		n += len(s) + 1
	}
	return n + 8*(len(argv)+len(env))
}

func TestPadLayout(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		env  []string
	}{
		{[]string{"/w"}, nil},
		{[]string{"/tmp/probe-model-1/sweep", "-n", "96"}, []string{"GOMAXPROCS=1", EnvDir + "=/tmp/parscope-probe-123456789"}},
		{[]string{"/tmp/probe-model-12/sweep", "-n", "96"}, []string{"GOMAXPROCS=1", EnvDir + "=/tmp/parscope-probe-1234567890"}},
		{[]string{"/w", strings.Repeat("a", 9000)}, []string{"X=" + strings.Repeat("b", 5000)}},
	} {
		env := padLayout(tc.argv, slices.Clone(tc.env))
		if len(env) != len(tc.env)+1 || !slices.Equal(env[:len(tc.env)], tc.env) || !strings.HasPrefix(env[len(env)-1], layoutPadVar+"=") {
			t.Errorf("padLayout(%.40q, %.40q) = %.60q: want the environment and the padding variable after it", tc.argv, tc.env, env)
			continue
		}
		if n := stackStart(tc.argv, env); n%layoutBytes != 0 {
			t.Errorf("argv %.40q, env %.40q: the stack starts with %d bytes, not a multiple of %d", tc.argv, tc.env, n, layoutBytes)
		}
	}
}

func TestValgrindWrapsAlone(t *testing.T) {
	c := Command{Path: "/bin/worker", Args: []string{"-n", "3"}, Env: []string{"A=1"}}
	w := Valgrind{Machine: ModelMachines[1], Env: []string{"B=2"}}.wrap(c, t.TempDir())
	if !slices.Equal(w.clientArgv, []string{"/bin/worker", "-n", "3"}) {
		t.Errorf("client command line %q, want the worker's", w.clientArgv)
	}
	if want := append(slices.Clone(ModelEnv), "A=1", "B=2"); !slices.Equal(w.Env, want) {
		t.Errorf("environment %q, want %q", w.Env, want)
	}
	if !slices.Contains(w.Env, EnvMainThread+"=1") {
		t.Errorf("environment %q does not keep the driver on the first thread", w.Env)
	}
	// The child started for a wrapped command gets the wrapped command's
	// environment, padded, and nothing of this process's: env(1) stands in
	// for valgrind and prints what it got (then the driver's answer is
	// missing, which is not what this test is about).
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Fatalf("env(1) is needed: %v", err)
	}
	t.Setenv("PARSCOPE_TEST_INHERITED", "yes")
	var out strings.Builder
	ec := Command{Path: envPath, Env: w.Env, Output: &out, clientArgv: w.clientArgv}
	Local{}.Plain(context.Background(), ec)
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != len(w.Env)+2 || !slices.Equal(got[:len(w.Env)], w.Env) ||
		!strings.HasPrefix(got[len(w.Env)], EnvDir+"=") || !strings.HasPrefix(got[len(w.Env)+1], layoutPadVar+"=") {
		t.Errorf("the child's environment:\n%s\nwant %q, the work directory and the padding, and nothing else", out.String(), w.Env)
	}
	if n := stackStart(w.clientArgv, got); n%layoutBytes != 0 {
		t.Errorf("the child's stack starts with %d bytes, not a multiple of %d", n, layoutBytes)
	}
}
