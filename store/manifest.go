package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/uncompressed"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/pstdir"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// FormatName and FormatVersion identify the .pst layout in the manifest.
// A reader refuses a manifest with another name or a newer version.
const (
	FormatName    = pstdir.Format
	FormatVersion = 1
)

const (
	manifestFile = pstdir.Manifest
	indexName    = "index"
	indexFile    = indexName + ".parquet"
)

// Manifest is the JSON document at the root of a .pst directory.
type Manifest struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// TimeUnitNS is the unit of every time column: stored value × TimeUnitNS = nanoseconds.
	TimeUnitNS int64                `json:"time_unit_ns"`
	Tables     map[string]TableInfo `json:"tables"`
	// Files describes the other Parquet files, by name: the index
	// ("index") and the dictionaries that exist ("state_names",
	// "region_names", "event_names", "counter_names", "procs", "comms").
	// Together with Tables it names every Parquet file of the .pst. A
	// .pst written before parscope listed them has none.
	Files  map[string]TableInfo `json:"files,omitempty"`
	Stats  Stats                `json:"stats"`
	Header trace.Header         `json:"header"`
}

// TableInfo describes one table file.
type TableInfo struct {
	File      string `json:"file"`
	Rows      int64  `json:"rows"`
	RowGroups int    `json:"row_groups"`
	Bytes     int64  `json:"bytes"`
}

// Stats are the summary figures computed while writing, which `parscope
// info` shows without reading the tables.
type Stats struct {
	Records         map[string]int64 `json:"records"`
	Runs            []RunStats       `json:"runs"`
	StatesUsed      int              `json:"states_used"`
	Sends           int64            `json:"sends"`
	Recvs           int64            `json:"recvs"`
	MessageBytes    int64            `json:"message_bytes"`
	Collectives     int64            `json:"collectives"`
	CollectiveBytes int64            `json:"collective_bytes"`
	BBVIntervals    int64            `json:"bbv_intervals"`
}

// RunStats summarises one run.
type RunStats struct {
	Run        int32 `json:"run"`
	Procs      int32 `json:"procs"`
	Records    int64 `json:"records"`
	TMin       int64 `json:"t_min_ns"`
	TMax       int64 `json:"t_max_ns"`
	StatesUsed int   `json:"states_used"`
}

type statsBuilder struct {
	records   [trace.KindBBV + 1]int64
	runs      []RunStats
	states    map[int32]bool
	runStates []map[int32]bool
	runDense  [][]bool // per run: state ids below 1<<16 already seen
	s         Stats
	intervals map[[3]int32]bool
	maxProc   int32
}

func (b *statsBuilder) add(r *trace.Record) {
	b.records[r.Kind]++
	for int32(len(b.runs)) <= r.Run {
		b.runs = append(b.runs, RunStats{Run: int32(len(b.runs)), TMin: -1})
		b.runStates = append(b.runStates, map[int32]bool{})
		b.runDense = append(b.runDense, nil)
	}
	rs := &b.runs[r.Run]
	rs.Records++
	if r.Proc+1 > rs.Procs {
		rs.Procs = r.Proc + 1
	}
	if r.Proc > b.maxProc {
		b.maxProc = r.Proc
	}
	if r.Kind != trace.KindBBV {
		if rs.TMin < 0 || r.T < rs.TMin {
			rs.TMin = r.T
		}
		end := r.T
		if (r.Kind == trace.KindSend || r.Kind == trace.KindRecv || r.Kind == trace.KindCollective) && r.End > end {
			end = r.End
		}
		if end > rs.TMax {
			rs.TMax = end
		}
	}
	switch r.Kind {
	case trace.KindState:
		if uint32(r.ID) < 1<<16 {
			rs := b.runDense[r.Run]
			if int(r.ID) >= len(rs) || !rs[r.ID] {
				b.markState(r)
			}
		} else {
			b.markState(r)
		}
	case trace.KindSend:
		b.s.Sends++
		b.s.MessageBytes += r.Value
	case trace.KindRecv:
		b.s.Recvs++
	case trace.KindCollective:
		b.s.Collectives++
		b.s.CollectiveBytes += r.Value
	case trace.KindBBV:
		if b.intervals == nil {
			b.intervals = map[[3]int32]bool{}
		}
		b.intervals[[3]int32{r.Run, r.Proc, r.Seq}] = true
	}
}

// markState records the first use of a state in a run.
func (b *statsBuilder) markState(r *trace.Record) {
	if b.states == nil {
		b.states = map[int32]bool{}
	}
	b.states[r.ID] = true
	b.runStates[r.Run][r.ID] = true
	if uint32(r.ID) < 1<<16 {
		rs := b.runDense[r.Run]
		if int(r.ID) >= len(rs) {
			rs = append(rs, make([]bool, int(r.ID)+1-len(rs))...)
		}
		rs[r.ID] = true
		b.runDense[r.Run] = rs
	}
}

func (b *statsBuilder) maxProcs() int { return int(b.maxProc) + 1 }

// finishRuns makes sure the header lists every run and enough processes.
func (b *statsBuilder) finishRuns(h *trace.Header) {
	for _, rs := range b.runs {
		h.EnsureRun(rs.Run, rs.Procs)
	}
}

func (b *statsBuilder) result() Stats {
	s := b.s
	s.Records = map[string]int64{}
	for k, n := range b.records {
		if n > 0 {
			s.Records[trace.Kind(k).String()] = n
		}
	}
	s.StatesUsed = len(b.states)
	s.BBVIntervals = int64(len(b.intervals))
	s.Runs = b.runs
	for i := range s.Runs {
		s.Runs[i].StatesUsed = len(b.runStates[i])
		if s.Runs[i].TMin < 0 {
			s.Runs[i].TMin = 0
		}
	}
	if s.Runs == nil {
		s.Runs = []RunStats{}
	}
	return s
}

func writeManifest(path string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadManifest reads and checks the manifest of the .pst at dir.
func ReadManifest(dir string) (*Manifest, error) {
	root, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readManifest(root, dir)
}

// openRoot opens the .pst directory dir, saying what dir is when it is not
// one: missing, or a file (often the trace file that was to be imported).
func openRoot(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err == nil {
		return root, nil
	}
	if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a parscope trace (a .pst directory): import it first (parscope import %s), or give it to parscope analyze, which imports trace files", dir, dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a parscope trace (.pst): it does not exist", dir)
	}
	return nil, err
}

// readManifest reads and checks the manifest of the .pst open as root at
// dir. The manifest is read inside root: a manifest.json that is a symbolic
// link leading out of the .pst is refused.
func readManifest(root *os.Root, dir string) (*Manifest, error) {
	data, err := readRegular(root, dir, manifestFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a parscope trace (.pst): no %s", dir, manifestFile)
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestFile), err)
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("%s: format %q is not %q", filepath.Join(dir, manifestFile), format.Excerpt([]byte(m.Format)), FormatName)
	}
	if m.Version > FormatVersion || m.Version < 1 {
		return nil, fmt.Errorf("%s: .pst format version %d is not supported by this parscope (it reads version %d); upgrade parscope", dir, m.Version, FormatVersion)
	}
	if m.TimeUnitNS <= 0 {
		return nil, fmt.Errorf("%s: time_unit_ns must be positive, got %d", filepath.Join(dir, manifestFile), m.TimeUnitNS)
	}
	for _, list := range []struct {
		key   string
		files map[string]TableInfo
	}{{"tables", m.Tables}, {"files", m.Files}} {
		for _, name := range slices.Sorted(maps.Keys(list.files)) {
			if f := list.files[name].File; !plainFileName(f) {
				return nil, fmt.Errorf("%s: %s.%s.file %q: want the plain name of a file inside the .pst (such as %s.parquet), neither . nor .. and with no path separator",
					filepath.Join(dir, manifestFile), list.key, format.Excerpt([]byte(name)), format.Excerpt([]byte(f)), format.Excerpt([]byte(name)))
			}
		}
	}
	return &m, nil
}

// plainFileName reports whether name is the name of a file in a directory:
// not empty, not . or .., with no separator (either slash) and no NUL.
func plainFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00") &&
		filepath.IsLocal(name) && filepath.Base(name) == name
}

// writeIndex writes the process index, zstd-compressed like the tables: at
// a row per (table, row group, process) it is a tenth of a store of
// thousands of processes when left uncompressed. An index of fewer than
// smallIndex rows (a few kilobytes) is written uncompressed: compressing
// it was a sixth of the time a short recording took to write its .pst at
// exit (a zstd encoder's set-up), for nothing.
func writeIndex(path string, index []indexRow) error {
	var codec compress.Codec = tableCodec
	if len(index) < smallIndex {
		codec = &uncompressed.Codec{}
	}
	return parquet.WriteFile(path, index, parquet.Compression(codec),
		parquet.CreatedBy("parscope", "", ""))
}

// smallIndex is the fewest rows of an index written compressed.
const smallIndex = 256

// Dictionary tables, so that SQL users can join names to ids.
type stateNameRow struct {
	ID          int32  `parquet:"id"`
	Name        string `parquet:"name"`
	Description string `parquet:"description"`
	File        string `parquet:"file"`
	Line        int32  `parquet:"line"`
}

type regionNameRow struct {
	ID       int32  `parquet:"id"`
	Kind     string `parquet:"kind"`
	Label    string `parquet:"label"`
	Function string `parquet:"function"`
	File     string `parquet:"file"`
	Line     int32  `parquet:"line"`
	EndLine  int32  `parquet:"end_line"`
	Parent   int32  `parquet:"parent"`
}

type nameRow struct {
	ID   int32  `parquet:"id"`
	Name string `parquet:"name"`
	Unit string `parquet:"unit,optional"`
}

type procRow struct {
	Run  int32  `parquet:"run"`
	Proc int32  `parquet:"proc"`
	Name string `parquet:"name"`
}

type commRow struct {
	ID      int32  `parquet:"id"`
	Name    string `parquet:"name"`
	Members string `parquet:"members"`
}

// writeDicts writes the dictionaries of h that are not empty into dir and
// describes each in files.
func writeDicts(dir string, h *trace.Header, files map[string]TableInfo) error {
	if err := writeDict(dir, "state_names", h.States, files, func(s *trace.StateDef) stateNameRow {
		return stateNameRow{s.ID, s.Name, s.Description, s.File, s.Line}
	}); err != nil {
		return err
	}
	if err := writeDict(dir, "region_names", h.Regions, files, func(r *trace.RegionDef) regionNameRow {
		return regionNameRow{r.ID, r.Kind.String(), r.Label, r.Function, r.File, r.Line, r.EndLine, r.Parent}
	}); err != nil {
		return err
	}
	if err := writeDict(dir, "event_names", h.Events, files, func(e *trace.EventDef) nameRow {
		return nameRow{ID: e.ID, Name: e.Name}
	}); err != nil {
		return err
	}
	if err := writeDict(dir, "counter_names", h.Counters, files, func(c *trace.CounterDef) nameRow {
		return nameRow{c.ID, c.Name, c.Unit}
	}); err != nil {
		return err
	}
	if err := writeDict(dir, "procs", h.Procs, files, func(p *trace.ProcInfo) procRow {
		return procRow{p.Run, p.Proc, p.Name}
	}); err != nil {
		return err
	}
	return writeDict(dir, "comms", h.Comms, files, func(c *trace.CommDef) commRow {
		ms := make([]string, len(c.Members))
		for j, m := range c.Members {
			ms[j] = fmt.Sprint(m)
		}
		return commRow{c.ID, c.Name, strings.Join(ms, ";")}
	})
}

// writeDict writes the rows row makes of defs as dir/name.parquet and
// describes it in files[name], or does nothing when there are no defs.
func writeDict[D, R any](dir, name string, defs []D, files map[string]TableInfo, row func(*D) R) error {
	if len(defs) == 0 {
		return nil
	}
	rows := make([]R, len(defs))
	for i := range defs {
		rows[i] = row(&defs[i])
	}
	if err := parquet.WriteFile(filepath.Join(dir, name+".parquet"), rows); err != nil {
		return err
	}
	return describeFile(dir, name, files)
}

// describeFile sets files[name] to what dir/name.parquet holds: its rows,
// row groups and size.
func describeFile(dir, name string, files map[string]TableInfo) error {
	file := name + ".parquet"
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquetOpen...)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	files[name] = TableInfo{File: file, Rows: pf.NumRows(), RowGroups: len(pf.RowGroups()), Bytes: st.Size()}
	return nil
}

// readRegular reads the file name inside root (the .pst at dir), refusing
// one that is not a regular file before opening it: opening a named pipe
// would block.
func readRegular(root *os.Root, dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	fi, err := root.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := regular.CheckMode(path, fi.Mode()); err != nil {
		return nil, err
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}
