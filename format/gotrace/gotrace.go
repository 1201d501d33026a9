package gotrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	xtrace "golang.org/x/exp/trace"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Name is the format's name as given to --format.
const Name = "gotrace"

// State ids of the fixed state dictionary (see the package documentation).
const (
	StateRunning      int32 = 0
	StateRunnable     int32 = 1
	StateWaiting      int32 = 2
	StateSyscall      int32 = 3
	StateNotExist     int32 = 4
	StateUndetermined int32 = 5
	StateIdle         int32 = 6
)

// Names of the repairs the importer counts in Header.Repairs.
const (
	// RepairUnendedRegion counts user regions still open at the end of a
	// trace, closed at the trace's last time.
	RepairUnendedRegion = "unended-region-closed-at-end"
	// RepairUnmatchedEnd counts region ends that match no open region (the
	// region began before the trace started); they are dropped.
	RepairUnmatchedEnd = "region-end-without-begin"
	// RepairImplicitExit counts regions closed because an enclosing region
	// ended first.
	RepairImplicitExit = "implicit-region-exit"
	// RepairTruncated counts inputs cut short that were kept up to the cut
	// (Params["partial"]="true").
	RepairTruncated = "truncated-trace"
	// RepairTimeClamped counts events whose time went back and was moved to
	// the previous event's time (the reader normally prevents it).
	RepairTimeClamped = "time-clamped"
)

// Params keys read from format.Options.Params.
const (
	// ParamBy selects what a process is: "g" (goroutine, the default) or "p".
	ParamBy = "by"
	// ParamPartial, when "true", keeps what precedes a decoding error
	// instead of failing.
	ParamPartial = "partial"
)

// extraPrefix prefixes the importer's Meta.Extra keys.
const extraPrefix = "gotrace."

// knownVersions lists the trace headers golang.org/x/exp/trace reads.
const knownVersions = "go 1.11, 1.19, 1.21, 1.22, 1.23, 1.25 and 1.26"

// ctxEvery is how many events are read between checks of the context.
const ctxEvery = 1 << 14

var stateDefs = [...]trace.StateDef{
	{ID: StateRunning, Name: "running", Description: "a goroutine running on a thread; a P running"},
	{ID: StateRunnable, Name: "runnable", Description: "a goroutine ready to run, waiting for a P"},
	{ID: StateWaiting, Name: "waiting", Description: "a goroutine blocked (channel, select, sync, sleep, I/O, GC); the block event names why"},
	{ID: StateSyscall, Name: "syscall", Description: "a goroutine in a system call"},
	{ID: StateNotExist, Name: "not-exist", Description: "a goroutine that has ended; a P removed by GOMAXPROCS", Absent: true},
	{ID: StateUndetermined, Name: "undetermined", Description: "no information about the goroutine or P"},
	{ID: StateIdle, Name: "idle", Description: "a P with nothing to run"},
}

// States returns the fixed state dictionary of a mode: by goroutine
// (byP false) or by P.
func States(byP bool) []trace.StateDef {
	ids := []int32{StateRunning, StateRunnable, StateWaiting, StateSyscall, StateNotExist, StateUndetermined}
	if byP {
		ids = []int32{StateRunning, StateNotExist, StateUndetermined, StateIdle}
	}
	out := make([]trace.StateDef, len(ids))
	for i, id := range ids {
		out[i] = stateDefs[id]
	}
	return out
}

// goState maps a goroutine state to its state id.
func goState(s xtrace.GoState) int32 {
	switch s {
	case xtrace.GoRunning:
		return StateRunning
	case xtrace.GoRunnable:
		return StateRunnable
	case xtrace.GoWaiting:
		return StateWaiting
	case xtrace.GoSyscall:
		return StateSyscall
	case xtrace.GoNotExist:
		return StateNotExist
	}
	return StateUndetermined
}

// procState maps a P state to its state id.
func procState(s xtrace.ProcState) int32 {
	switch s {
	case xtrace.ProcRunning:
		return StateRunning
	case xtrace.ProcIdle:
		return StateIdle
	case xtrace.ProcNotExist:
		return StateNotExist
	}
	return StateUndetermined
}

func init() { format.Register(Importer{}) }

// Importer is the Go execution trace importer. The zero value is ready to
// use; it is registered with the format package under Name.
type Importer struct{}

// Name returns "gotrace".
func (Importer) Name() string { return Name }

// Describe returns a one-line description for help texts.
func (Importer) Describe() string {
	return "Go runtime execution traces (runtime/trace, go test -trace); a process per goroutine, or per P with --param by=p"
}

// Detect reports whether head starts like a Go execution trace: "go 1."
// and " trace" within the first 16 bytes. The name is not used.
func (Importer) Detect(name string, head []byte) bool {
	head = head[:min(len(head), 16)]
	return bytes.HasPrefix(head, []byte("go 1.")) && bytes.Contains(head, []byte(" trace"))
}

// Import reads the inputs and writes their goroutines (or Ps) to w; it is
// the same as the package-level Import.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	return Import(ctx, inputs, opts, w)
}

// Import reads Go execution traces, one run per input, and writes them to
// w as described in the package documentation, filling in w's header:
// metadata, runs, processes, the state, event and region dictionaries,
// repairs, and the counts of what was skipped. It stops at the first error,
// which is a *format.Error naming the input when the problem lies in it.
func Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) == 0 {
		return errors.New("gotrace: no input files")
	}
	var c converter
	switch by := strings.ToLower(strings.TrimSpace(opts.Params[ParamBy])); by {
	case "", "g", "goroutine":
	case "p", "proc":
		c.byP = true
	default:
		return fmt.Errorf("gotrace: parameter by=%q: expected g (a process per goroutine) or p (a process per P)", opts.Params[ParamBy])
	}
	if s, ok := opts.Params[ParamPartial]; ok {
		v, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("gotrace: parameter partial=%q: expected true or false", s)
		}
		c.partial = v
	}
	h := w.Header()
	h.Meta.ClockResolution = 1
	h.Meta.Source = Name
	h.Meta.Inputs = append(h.Meta.Inputs, inputs...)
	c.w, c.h, c.ctx = w, h, ctx
	c.counts = map[string]int64{}
	c.eventIDs = map[eventKey]int32{}
	c.regionIDs = map[string]int32{}
	if h.Repairs == nil {
		h.Repairs = map[string]int64{}
	}
	// Dictionaries may already hold entries (several imports into one
	// writer): new ids start after the largest.
	for _, d := range h.Events {
		c.nextEvent = max(c.nextEvent, d.ID+1)
	}
	for _, d := range h.Regions {
		c.nextRegion = max(c.nextRegion, d.ID+1)
	}
	addStates(h, States(c.byP))
	base := int32(len(h.Runs))
	for i, path := range inputs {
		if err := c.file(base+int32(i), path); err != nil {
			return err
		}
	}
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	for k, n := range c.counts {
		h.Meta.Extra[extraPrefix+k] = strconv.FormatInt(n, 10)
	}
	for k, n := range h.Repairs {
		if n == 0 {
			delete(h.Repairs, k)
		}
	}
	return nil
}

// addStates adds the defs h does not define yet.
func addStates(h *trace.Header, defs []trace.StateDef) {
	have := map[int32]bool{}
	for _, d := range h.States {
		have[d.ID] = true
	}
	for _, d := range defs {
		if !have[d.ID] {
			h.States = append(h.States, d)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// errPanic marks an error made from a panic of the trace reader.
var errPanic = errors.New("the trace reader panicked")

// file imports one input as run.
func (c *converter) file(run int32, path string) (err error) {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("gotrace: %w", err)
	}
	f, err := regular.Open(path)
	if err != nil {
		return fmt.Errorf("gotrace: %w", err)
	}
	defer f.Close()
	var src io.Reader = bufio.NewReaderSize(f, 1<<16)
	if magic, _ := src.(*bufio.Reader).Peek(2); format.IsGzip(magic) {
		gz, err := gzip.NewReader(src)
		if err != nil {
			return &format.Error{File: path, Offset: 0, Msg: "cannot read the gzip stream", Err: err}
		}
		defer gz.Close()
		src = gz
	}
	hb := bufio.NewReaderSize(src, 1<<16)
	head, _ := hb.Peek(16)
	version, ok := headerVersion(head)
	if !ok {
		return &format.Error{File: path, Offset: 0,
			Msg: fmt.Sprintf(`not a Go execution trace: the file starts with %q (expected "go 1.N trace")`, head)}
	}
	cr := &countingReader{r: hb}
	rd, err := newReader(cr)
	if err != nil {
		return &format.Error{File: path, Offset: cr.n,
			Msg: fmt.Sprintf("cannot read this %s trace (the reader knows the headers %s)", version, knownVersions), Err: err}
	}
	c.beginRun(run)
	untilCtx := ctxEvery
	for {
		if untilCtx--; untilCtx == 0 {
			untilCtx = ctxEvery
			if err := c.ctx.Err(); err != nil {
				return &format.Error{File: path, Offset: cr.n, Msg: "import interrupted", Err: err}
			}
		}
		done, err := c.step(rd)
		if done {
			break
		}
		if err != nil {
			var werr *writeError
			if errors.As(err, &werr) {
				return &format.Error{File: path, Offset: cr.n, Msg: "cannot write the record", Err: werr.err}
			}
			if c.partial && c.written > 0 {
				c.h.Repair(RepairTruncated, 1)
				c.counts["truncated-at-byte"] = cr.n
				break
			}
			return &format.Error{File: path, Offset: cr.n,
				Msg: fmt.Sprintf("cannot decode the %s trace after %d events (the problem lies before this offset, in the last generation read; the file may be cut short)", version, c.read),
				Err: err}
		}
	}
	if c.written == 0 {
		return &format.Error{File: path, Offset: cr.n,
			Msg: fmt.Sprintf("the %s trace has no goroutine or P events (it is empty or cut short)", version)}
	}
	if err := c.endRun(run, path, version); err != nil {
		return &format.Error{File: path, Offset: cr.n, Msg: "cannot write the record", Err: err}
	}
	return nil
}

// headerVersion returns the "go 1.N" part of a trace header.
func headerVersion(head []byte) (string, bool) {
	if !(Importer{}).Detect("", head) {
		return "", false
	}
	i := bytes.Index(head, []byte(" trace"))
	return string(head[:i]), true
}

// newReader creates the trace reader, turning a panic into an error.
func newReader(r io.Reader) (rd *xtrace.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rd, err = nil, fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	return xtrace.NewReader(r)
}

// writeError wraps an error of the trace writer.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// step reads and converts one event. It reports done at the end of the
// input; a panic of the reader (or of the event accessors) becomes an
// error.
func (c *converter) step(rd *xtrace.Reader) (done bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			done, err = false, fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	ev, err := rd.ReadEvent()
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	c.read++
	if err := c.event(&ev); err != nil {
		return false, &writeError{err}
	}
	return false, nil
}

// baseName is the run's name: the input's file name.
func baseName(path string) string { return filepath.Base(path) }
