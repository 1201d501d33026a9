package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTerminal is a writer the bar takes for a terminal.
type fakeTerminal struct{ bytes.Buffer }

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func withFakeTerminal(t *testing.T) {
	t.Helper()
	old := isTerminal
	isTerminal = func(w io.Writer) bool { _, ok := w.(*fakeTerminal); return ok }
	t.Cleanup(func() { isTerminal = old; SetLevel(Normal); current.Store(nil) })
}

func TestNotATerminalShowsNothing(t *testing.T) {
	// A pipe, as when stderr is redirected: the real terminal check.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := To(w, "importing", 100, Records)
	if b != nil {
		t.Fatalf("To(pipe) = %v, want nil (no bar)", b)
	}
	b.Add(50)
	b.Describe("still")
	b.Done()
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Fatalf("a pipe got %q, want nothing", out)
	}
	var buf bytes.Buffer
	To(&buf, "x", 1, Bytes).Add(1)
	if buf.Len() != 0 {
		t.Fatalf("a buffer got %q, want nothing", buf.String())
	}
}

func TestQuietShowsNothingOnATerminal(t *testing.T) {
	withFakeTerminal(t)
	SetLevel(Quiet)
	var ft fakeTerminal
	if b := To(&ft, "importing", 10, Records); b != nil {
		t.Fatal("--quiet: To returned a bar")
	}
	Notef(&ft, "note\n")
	Detailf(&ft, "detail\n")
	if ft.Len() != 0 {
		t.Fatalf("--quiet wrote %q", ft.String())
	}
	SetLevel(Normal)
	Notef(&ft, "note\n")
	Detailf(&ft, "detail\n")
	SetLevel(Verbose)
	Detailf(&ft, "detail %d\n", 2)
	if got := ft.String(); got != "note\ndetail 2\n" {
		t.Fatalf("notes = %q", got)
	}
}

func TestRenderRecords(t *testing.T) {
	withFakeTerminal(t)
	if To(&fakeTerminal{}, "x", 1, Records) == nil {
		t.Fatal("To(terminal) = nil")
	}
	var ft fakeTerminal
	c := &clock{time.Unix(1000, 0)}
	b := newBar(&ft, "importing otf2", 1_000_000, Records, c.now)
	c.t = c.t.Add(time.Second)
	b.Add(250_000)
	want := "\rimporting otf2  250,000 / 1,000,000 records   25% [=====               ]  250,000 records/s  ETA 3s\x1b[K"
	if got := ft.String(); got != want {
		t.Fatalf("first draw\n got %q\nwant %q", got, want)
	}
	// Within Interval of the last draw: nothing more is written.
	ft.Reset()
	c.t = c.t.Add(Interval / 2)
	b.Add(1)
	if ft.Len() != 0 {
		t.Fatalf("redrawn within %v: %q", Interval, ft.String())
	}
	c.t = c.t.Add(Interval)
	b.Set(1_000_000)
	if got := ft.String(); !strings.Contains(got, "1,000,000 / 1,000,000 records  100% [====================]") || strings.Contains(got, "ETA") {
		t.Fatalf("complete bar = %q", got)
	}
	ft.Reset()
	b.Done()
	if got := ft.String(); got != "\r\x1b[K" {
		t.Fatalf("Done wrote %q, want the line cleared", got)
	}
	ft.Reset()
	b.Done()
	if ft.Len() != 0 {
		t.Fatalf("second Done wrote %q", ft.String())
	}
}

func TestRenderBytesAndUnknownTotal(t *testing.T) {
	var ft fakeTerminal
	c := &clock{time.Unix(0, 0)}
	b := newBar(&ft, "reading", 4<<20, Bytes, c.now)
	c.t = c.t.Add(2 * time.Second)
	b.Add(1 << 20)
	want := "\rreading  1.0 MiB / 4.0 MiB   25% [=====               ]  512.0 KiB/s  ETA 6s\x1b[K"
	if got := ft.String(); got != want {
		t.Fatalf("bytes\n got %q\nwant %q", got, want)
	}
	ft.Reset()
	u := newBar(&ft, "analysing", 0, Steps, c.now)
	u.Describe("analysing: entropy")
	want = "\ranalysing: entropy  0 done\x1b[K"
	if got := ft.String(); got != want {
		t.Fatalf("unknown total\n got %q\nwant %q", got, want)
	}
}

func TestStagesAndLive(t *testing.T) {
	var ft fakeTerminal
	c := &clock{time.Unix(0, 0)}
	b := newBar(&ft, "probe build", 0, Steps, c.now)
	c.t = c.t.Add(3 * time.Second)
	b.Describe("probe build")
	if got, want := ft.String(), "\rprobe build  0 done  3s elapsed\x1b[K"; got != want {
		t.Fatalf("before any step\n got %q\nwant %q", got, want)
	}
	ft.Reset()
	w := b.Stages("probe build")
	io.WriteString(w, "vectors: 10 blocks")
	if ft.Len() != 0 {
		t.Fatalf("a partial line redrew the bar: %q", ft.String())
	}
	io.WriteString(w, " in 2 steps\nphases: 3\n")
	if got, want := ft.String(), "\rprobe build: vectors: 10 blocks in 2 steps  1 done\x1b[K\rprobe build: phases: 3  2 done\x1b[K"; got != want {
		t.Fatalf("stages drew\n got %q\nwant %q", got, want)
	}
	if b.done.Load() != 2 {
		t.Fatalf("steps = %d, want 2", b.done.Load())
	}
}

func TestLiveRedrawsUntilDone(t *testing.T) {
	var mu sync.Mutex
	var ft fakeTerminal
	lw := lockedWriter{&mu, &ft}
	b := newBar(lw, "serve", 0, Steps, time.Now)
	b.Live()
	b.Live() // a second call starts nothing more
	time.Sleep(3 * Interval)
	b.Done()
	mu.Lock()
	n := strings.Count(ft.String(), "\rserve")
	end := strings.HasSuffix(ft.String(), "\r\x1b[K")
	ft.Reset()
	mu.Unlock()
	if n < 1 || !end {
		t.Fatalf("Live drew %d times, ended cleared %v", n, end)
	}
	time.Sleep(2 * Interval)
	mu.Lock()
	defer mu.Unlock()
	if ft.Len() != 0 {
		t.Fatalf("drawn after Done: %q", ft.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestNotesAndWarningsAboveTheBar checks that a note, a detail and a
// warning clear the bar drawn, are written, and redraw it below; that a
// warning is written at the Quiet level too while notes are not; and that
// after Done nothing is redrawn.
func TestNotesAndWarningsAboveTheBar(t *testing.T) {
	t.Cleanup(func() { SetLevel(Normal); current.Store(nil) })
	var ft fakeTerminal
	c := &clock{time.Unix(0, 0)}
	b := newBar(&ft, "sweep", 4, Steps, c.now)
	b.Set(1)
	ft.Reset()
	Notef(&ft, "trial %d done\n", 1)
	bar := "\rsweep  1 / 4 done   25% [=====               ]\x1b[K"
	if got, want := ft.String(), "\r\x1b[Ktrial 1 done\n"+bar; got != want {
		t.Fatalf("note\n got %q\nwant %q", got, want)
	}
	ft.Reset()
	Warnf(&ft, "%d records lost", 3)
	if got, want := ft.String(), "\r\x1b[Kwarning: 3 records lost\n"+bar; got != want {
		t.Fatalf("warning\n got %q\nwant %q", got, want)
	}
	ft.Reset()
	SetLevel(Quiet)
	Notef(&ft, "note\n")
	Detailf(&ft, "detail\n")
	Warnf(&ft, "repaired %s\n", "x")
	if got, want := ft.String(), "\r\x1b[Kwarning: repaired x\n"+bar; got != want {
		t.Fatalf("quiet: got %q, want only the warning %q", got, want)
	}
	SetLevel(Verbose)
	b.Done()
	ft.Reset()
	Detailf(&ft, "took %s\n", "1s")
	if got := ft.String(); got != "took 1s\n" {
		t.Fatalf("after Done: %q, want the detail alone, the bar not redrawn", got)
	}
}

// TestResultsEndTheBar checks that a result written to a terminal ends the
// bar first, so that it starts at the line's start, and that Results
// leaves a writer that is not a terminal as it is.
func TestResultsEndTheBar(t *testing.T) {
	withFakeTerminal(t)
	t.Cleanup(func() { current.Store(nil) })
	var ft fakeTerminal
	b := To(&ft, "phases", 0, Steps)
	b.Describe("phases: x.bb")
	out := Results(&ft)
	io.WriteString(out, "phase  weight\n")
	b.Add(1) // the bar may be drawn again after its end
	io.WriteString(out, "0      1.0\n")
	want := "\rphases: x.bb  0 done\x1b[K\r\x1b[Kphase  weight\n\rphases: x.bb  1 done\x1b[K\r\x1b[K0      1.0\n"
	if got := ft.String(); got != want {
		t.Fatalf("results\n got %q\nwant %q", got, want)
	}
	var buf bytes.Buffer
	if w := Results(&buf); w != io.Writer(&buf) {
		t.Fatalf("Results(buffer) = %T, want the buffer itself", w)
	}
}
