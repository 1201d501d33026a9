package instrument

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/parscope/parscope/trace"
)

// mergeLimit is the number of processes up to which build merges the
// processes' streams in time itself (one small buffer each); above it the
// processes are written one after another and the store sorts them.
const mergeLimit = 512

// build writes the .pst at path, through the linked store's create, from a
// spill file and its header.
func build(create CreateTrace, path string, force bool, h *spillHeader, spillPath string, chunks map[int32][]*chunk) error {
	f, err := os.Open(spillPath)
	if err != nil {
		return fmt.Errorf("instrument: %w", err)
	}
	defer f.Close()
	var in io.ReaderAt = f
	if len(chunks) > mergeLimit {
		// Read one after another (below): small reads from a block cache.
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("instrument: %w", err)
		}
		in = newBlockCache(f, st.Size())
	}
	w, err := create(path, force)
	if err != nil {
		return fmt.Errorf("instrument: %w", err)
	}
	*w.Header() = h.Header
	w.Header().Meta.ClockResolution = h.Resolution
	scale := 1.0
	if h.Header.Meta.Extra["clock"] == "tsc" {
		scale = nsPerTick(h.Start, h.Calibrated)
	}
	conv := timeConv{t0: h.Start.Ticks, scale: scale, res: h.Resolution}
	procs := make([]int32, 0, len(chunks))
	for p := range chunks {
		procs = append(procs, p)
	}
	slices.Sort(procs)
	readers := make([]*procReader, len(procs))
	for i, p := range procs {
		readers[i] = &procReader{f: in, proc: p, chunks: chunks[p], conv: conv}
		w.Header().EnsureRun(0, p+1)
	}
	add := func(r *trace.Record) error {
		if r.Kind == trace.KindCounter && r.Tag == 1 {
			// An occupancy counter: ticks to nanoseconds.
			ns := float64(r.Value) * scale
			r.Tag = 0
			r.Value = int64(math.Float64bits(ns))
		}
		return w.Add(*r)
	}
	if len(readers) <= mergeLimit {
		in := make([]trace.Reader, len(readers))
		for i, r := range readers {
			in[i] = r
		}
		err = trace.Each(trace.Merge(in...), add)
	} else {
		// One after another, through one buffer: trace.Each's own buffer
		// (4,096 records, 229 KiB) made per process was most of the cost
		// of closing a recording of tens of thousands of goroutines.
		err = trace.Each(&serialReader{rs: readers}, add)
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("instrument: building %s: %w", path, err)
	}
	var clamped int64
	for _, r := range readers {
		clamped += r.clamped
	}
	if clamped > 0 {
		w.Header().Repair("clock-backwards", clamped)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("instrument: writing %s: %w", path, err)
	}
	return nil
}

// serialReader reads its processes' streams one after another.
type serialReader struct {
	rs []*procReader
}

func (s *serialReader) Read(buf []trace.Record) (int, error) {
	for len(s.rs) > 0 {
		n, err := s.rs[0].Read(buf)
		if errors.Is(err, io.EOF) {
			s.rs = s.rs[1:]
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
	return 0, io.EOF
}

// RecoverOptions tune Recover.
type RecoverOptions struct {
	// Force replaces an existing .pst at the path.
	Force bool
	// Keep keeps the spill directory even when the trace holds every
	// intact chunk. It is kept anyway when anything was skipped.
	Keep bool
}

// Recovery says what Recover read from a spill directory.
type Recovery struct {
	// Spill is the spill file read.
	Spill string `json:"spill"`
	// Chunks and Records count the intact chunks, and the records in
	// them, that the trace holds.
	Chunks  int   `json:"chunks"`
	Records int64 `json:"records"`
	// Skipped lists the damaged stretches of the spill file (offset and
	// length in bytes) between or after intact chunks: records lost.
	Skipped []SkippedRange `json:"skipped,omitempty"`
	// TornTail is the number of bytes at the end of the spill file that
	// the program's death cut short: a partly written chunk, expected after
	// a crash and not counted as damage.
	TornTail int64 `json:"torn_tail_bytes"`
	// Kept is true when the spill directory was left in place.
	Kept bool `json:"kept"`
	// Complete is true when the spill held a whole recording, left by a
	// Close with Options.BuildLater, rather than what a program that
	// ended without Close left behind.
	Complete bool `json:"complete"`
}

// SkippedBytes is the total length of the skipped stretches.
func (r *Recovery) SkippedBytes() int64 {
	var n int64
	for _, s := range r.Skipped {
		n += s.Bytes
	}
	return n
}

// Recover builds the .pst at path from the spill directory that a program
// recording to path left behind. After a Close with Options.BuildLater the
// spill is a complete recording, and the trace is the one Close would have
// built (replacing a trace at path if the recording was started with
// Force). When the program ended without Close (os.Exit, an unrecovered
// panic in a goroutine, a kill), the trace is marked recovered and holds every record written
// up to each process's last flush point (Process.Flush, Process.Done,
// Recorder.Flush) and every full buffer the spill writer had written;
// records still in memory at the exit are lost. A damaged chunk in the
// spill file is skipped and reported in the Recovery; the rest is still
// recovered. The spill directory is removed only when the trace holds every
// intact chunk, nothing was skipped and opts.Keep is false.
func Recover(path string, opts RecoverOptions) (*Recovery, error) {
	create := linkedStore()
	if create == nil {
		return nil, fmt.Errorf("instrument: %w", errNoStore)
	}
	path = filepath.Clean(path)
	dir := SpillDir(path)
	hdrPath := filepath.Join(dir, headerFile)
	data, err := os.ReadFile(hdrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("instrument: no spill directory to recover at %s", dir)
			}
			return nil, fmt.Errorf("instrument: the spill directory %s has no %s (the recording's header: dictionaries, clock calibration); it cannot be recovered without it", dir, headerFile)
		}
		return nil, fmt.Errorf("instrument: %w", err)
	}
	var h spillHeader
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("instrument: %s: %w", hdrPath, err)
	}
	if h.Resolution <= 0 {
		h.Resolution = 1
	}
	spillPath := filepath.Join(dir, spillFile)
	f, err := os.Open(spillPath)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	sc, err := scanChunks(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("instrument: %s: %w", spillPath, err)
	}
	rec := &Recovery{Spill: spillPath, Chunks: sc.count, Records: sc.records, Skipped: sc.skipped, TornTail: sc.torn}
	if h.Header.Meta.Extra == nil {
		h.Header.Meta.Extra = map[string]string{}
	}
	// A complete recording (Options.BuildLater) builds into the trace
	// Close would have written; anything else is marked recovered.
	rec.Complete = h.Complete
	if !h.Complete || len(sc.skipped) > 0 || sc.torn > 0 {
		h.Header.Meta.Extra["recovered"] = "true"
	}
	if len(sc.skipped) > 0 {
		h.Header.Meta.Extra["recovered_skipped_bytes"] = fmt.Sprint(rec.SkippedBytes())
	}
	if err := build(create, path, opts.Force || h.Complete && h.Replace, &h, spillPath, sc.chunks); err != nil {
		return nil, err
	}
	if opts.Keep || len(sc.skipped) > 0 {
		rec.Kept = true
		return rec, nil
	}
	return rec, os.RemoveAll(dir)
}

// Unbuilt reports whether the spill directory of a recording to path holds
// a complete recording that has not been built yet: one a Close with
// Options.BuildLater left, which Recover turns into the .pst.
func Unbuilt(path string) bool {
	data, err := os.ReadFile(filepath.Join(SpillDir(path), headerFile))
	if err != nil {
		return false
	}
	var h spillHeader
	return json.Unmarshal(data, &h) == nil && h.Complete
}
