// Package progress shows how far a long command has got (records or bytes
// done of a total, the rate and the time left) on a terminal, and nothing
// when its output goes to a pipe or a file. It also holds the level of
// detail that the global --quiet and --verbose flags choose, so that every
// command honours them the same way, and writes the notes and warnings of
// a command so that none lands on a progress line: the bar drawn is
// cleared first (and drawn again below a note), and Results does the same
// for a command's results on a terminal.
//
// The rule of the levels: Quiet silences the progress line and the notes
// (what was done), never an error and never a warning. A warning says that
// the result is not all that the input would give (data lost, left out or
// repaired on the way) or that the command does something the user may
// not expect (serving traces on a non-loopback address); Warnf writes it
// at every level.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/parscope/parscope/internal/human"
)

// Level is how much a command reports on stderr besides its results.
type Level int

const (
	// Quiet reports errors and warnings only: no progress, no notes.
	Quiet Level = -1
	// Normal shows progress on a terminal and one-line notes of what was
	// done.
	Normal Level = 0
	// Verbose adds details of each step.
	Verbose Level = 1
)

var level atomic.Int32

// SetLevel sets the level for the whole process; the command line does it
// once from --quiet and --verbose.
func SetLevel(l Level) { level.Store(int32(l)) }

// CurrentLevel returns the level SetLevel chose (Normal by default).
func CurrentLevel() Level { return Level(level.Load()) }

// Notef writes a note to w unless the level is Quiet, above the progress
// line if one is drawn.
func Notef(w io.Writer, format string, args ...any) {
	if CurrentLevel() > Quiet {
		above(w, format, args...)
	}
}

// Detailf writes a detail to w only when the level is Verbose, above the
// progress line if one is drawn.
func Detailf(w io.Writer, format string, args ...any) {
	if CurrentLevel() >= Verbose {
		above(w, format, args...)
	}
}

// Warnf writes "warning: " and the formatted message to w at every level,
// Quiet included (see the package's rule), above the progress line if one
// is drawn. The message ends with a newline if format does not.
func Warnf(w io.Writer, format string, args ...any) {
	if !strings.HasSuffix(format, "\n") {
		format += "\n"
	}
	above(w, "warning: "+format, args...)
}

// current is the bar last started and not yet done: the one a note,
// warning or result must not be written onto.
var current atomic.Pointer[Bar]

// above writes the formatted text to w with the current bar, if drawn,
// cleared first and drawn again after it.
func above(w io.Writer, format string, args ...any) {
	b := current.Load()
	if b == nil {
		fmt.Fprintf(w, format, args...)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	drawn := b.drawn
	b.clear()
	fmt.Fprintf(w, format, args...)
	if drawn {
		b.draw(b.now(), true)
	}
}

// Results returns the writer a command's results should go to, given
// stdout: w itself, unless w is a terminal, in which case every write first
// ends the current bar as Done does (it shares the terminal with stderr),
// so that no result is written onto the progress line.
func Results(w io.Writer) io.Writer {
	if !isTerminal(w) {
		return w
	}
	return resultWriter{w}
}

type resultWriter struct{ w io.Writer }

func (r resultWriter) Write(p []byte) (int, error) {
	current.Load().Done()
	return r.w.Write(p)
}

// Unit is what a bar counts.
type Unit int

const (
	// Records counts trace records.
	Records Unit = iota
	// Bytes counts bytes, shown in KiB, MiB, ...
	Bytes
	// Steps counts steps of a command (analyses, trials, runs).
	Steps
)

// Interval is the shortest time between two redraws: at most ten a second.
const Interval = 100 * time.Millisecond

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Bar is a progress line redrawn in place. A nil *Bar is valid and does
// nothing, which is what Start returns when nothing should be shown.
type Bar struct {
	w     io.Writer
	unit  Unit
	total atomic.Int64
	done  atomic.Int64
	now   func() time.Time
	start time.Time

	mu    sync.Mutex
	what  string
	last  time.Time
	drawn bool
	stop  chan struct{} // closed by Done when Live runs
	part  []byte        // a partial line written to Stages
}

// Start returns a bar on stderr for work of total units (0 or less when
// unknown), or nil when stderr is not a terminal or the level is Quiet.
func Start(what string, total int64, unit Unit) *Bar { return To(os.Stderr, what, total, unit) }

// To is Start on w.
func To(w io.Writer, what string, total int64, unit Unit) *Bar {
	if CurrentLevel() <= Quiet || !isTerminal(w) {
		return nil
	}
	return newBar(w, what, total, unit, time.Now)
}

func newBar(w io.Writer, what string, total int64, unit Unit, now func() time.Time) *Bar {
	b := &Bar{w: w, unit: unit, what: what, now: now, start: now()}
	b.total.Store(total)
	current.Store(b)
	return b
}

// Add counts n more units done, redrawing when Interval has passed.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.done.Add(n)
	b.maybeDraw(false)
}

// Set sets the units done, redrawing when Interval has passed.
func (b *Bar) Set(n int64) {
	if b == nil {
		return
	}
	b.done.Store(n)
	b.maybeDraw(false)
}

// SetTotal changes the total (0 or less when unknown).
func (b *Bar) SetTotal(n int64) {
	if b == nil {
		return
	}
	b.total.Store(n)
}

// Describe changes the text before the counts and redraws at once.
func (b *Bar) Describe(what string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.what = what
	b.mu.Unlock()
	b.maybeDraw(true)
}

// Live redraws the bar every Interval until Done, so that the elapsed
// time moves while a step that reports nothing runs.
func (b *Bar) Live() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		return
	}
	b.stop = make(chan struct{})
	go func(stop chan struct{}) {
		t := time.NewTicker(Interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				now := b.now()
				b.mu.Lock()
				if b.stop == stop { // not Done while this waited for mu
					b.draw(now, false)
				}
				b.mu.Unlock()
			}
		}
	}(b.stop)
}

// Stages returns a writer whose every line, after what and ": ", becomes
// the bar's description and counts one step: for code that logs the stage
// it has reached ("probe build: vectors: …").
func (b *Bar) Stages(what string) io.Writer { return stageWriter{b, what} }

type stageWriter struct {
	b    *Bar
	what string
}

func (s stageWriter) Write(p []byte) (int, error) {
	b := s.b
	if b == nil {
		return len(p), nil
	}
	b.mu.Lock()
	b.part = append(b.part, p...)
	var lines []string
	for {
		i := bytes.IndexByte(b.part, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, string(b.part[:i]))
		b.part = b.part[i+1:]
	}
	b.mu.Unlock()
	for _, l := range lines {
		b.done.Add(1)
		b.Describe(s.what + ": " + l)
	}
	return len(p), nil
}

// Done stops Live, and clears the line, leaving the terminal as it was
// before the bar. The bar may be drawn again after Done: Done then clears
// it again.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
	b.clear()
}

// clear erases the line if the bar is drawn; b.mu is held.
func (b *Bar) clear() {
	if b.drawn {
		io.WriteString(b.w, "\r\x1b[K")
		b.drawn = false
	}
}

func (b *Bar) maybeDraw(force bool) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(now, force)
}

// draw draws the bar unless Interval has not passed since the last draw
// (and force is false); b.mu is held.
func (b *Bar) draw(now time.Time, force bool) {
	if !force && b.drawn && now.Sub(b.last) < Interval {
		return
	}
	b.last, b.drawn = now, true
	io.WriteString(b.w, "\r"+b.line(now)+"\x1b[K")
}

// line renders the bar: what, done of total, percentage, a 20-cell bar,
// the rate (of records or bytes) and the time left; before anything is
// done, the time elapsed.
func (b *Bar) line(now time.Time) string {
	done, total := b.done.Load(), b.total.Load()
	var s strings.Builder
	s.WriteString(b.what)
	s.WriteString("  ")
	s.WriteString(b.amount(done))
	if total > 0 {
		s.WriteString(" / ")
		s.WriteString(b.amount(total))
	}
	s.WriteString(b.suffix())
	if total > 0 {
		frac := min(float64(done)/float64(total), 1)
		const cells = 20
		full := int(frac * cells)
		fmt.Fprintf(&s, "  %3d%% [%s%s]", int(frac*100), strings.Repeat("=", full), strings.Repeat(" ", cells-full))
	}
	elapsed := now.Sub(b.start)
	if done == 0 && elapsed >= time.Second {
		s.WriteString("  ")
		s.WriteString(elapsed.Round(time.Second).String())
		s.WriteString(" elapsed")
	}
	if elapsed > 0 && done > 0 {
		rate := float64(done) / elapsed.Seconds()
		if b.unit != Steps {
			s.WriteString("  ")
			s.WriteString(b.amount(int64(rate)))
			s.WriteString(b.suffix())
			s.WriteString("/s")
		}
		if total > done {
			eta := time.Duration(float64(total-done) / rate * float64(time.Second))
			s.WriteString("  ETA ")
			s.WriteString(eta.Round(time.Second).String())
		}
	}
	return s.String()
}

func (b *Bar) amount(n int64) string {
	if b.unit == Bytes {
		return human.Bytes(n)
	}
	return human.Count(n)
}

func (b *Bar) suffix() string {
	switch b.unit {
	case Records:
		return " records"
	case Steps:
		return " done"
	}
	return ""
}
