package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// infoReport is what `parscope info` shows; --json prints it as is.
type infoReport struct {
	Trace             string           `json:"trace"`
	FormatVersion     int              `json:"format_version"`
	Source            string           `json:"source,omitempty"`
	Inputs            []string         `json:"inputs,omitempty"`
	Program           string           `json:"program,omitempty"`
	Host              string           `json:"host,omitempty"`
	ClockResolutionNS int64            `json:"clock_resolution_ns"`
	Runs              []infoRun        `json:"runs"`
	Records           map[string]int64 `json:"records"`
	TotalRecords      int64            `json:"total_records"`
	StatesUsed        int              `json:"states_used"`
	StatesNamed       int              `json:"states_named"`
	Regions           int              `json:"regions"`
	EventNames        int              `json:"event_names"`
	Sends             int64            `json:"sends"`
	Recvs             int64            `json:"recvs"`
	MessageBytes      int64            `json:"message_bytes"`
	Collectives       int64            `json:"collectives"`
	CollectiveBytes   int64            `json:"collective_bytes"`
	BBVIntervals      int64            `json:"bbv_intervals"`
	// StatesFrom is where the state analyses take processes' states from
	// by default (engine.ResolveStates), and StatesFromText says it in
	// words.
	StatesFrom     engine.StatesFrom `json:"states_from"`
	StatesFromText string            `json:"states_from_text"`
	// DroppedByFilter is the number of events a recording filter dropped
	// (the sum of the instrument library's dropped-count events).
	DroppedByFilter int64                      `json:"dropped_by_filter,omitempty"`
	Repairs         map[string]int64           `json:"repairs,omitempty"`
	Tables          map[string]store.TableInfo `json:"tables"`
	// Files are the index and the dictionaries, with their rows (the
	// manifest's files; none for a .pst written before it listed them).
	Files map[string]store.TableInfo `json:"files,omitempty"`
	Extra map[string]string          `json:"extra,omitempty"`
	// Procs names processes: the original id of each when an importer
	// renumbered them (a gomez pid, an MPI rank, a Paraver task).
	Procs []trace.ProcInfo `json:"procs,omitempty"`
}

// infoRun is a run as info shows it: the summary the overview analysis
// computes from the records (the same names and meanings), here from the
// manifest, and the states the run uses.
type infoRun struct {
	overview.RunSummary
	StatesUsed int `json:"states_used"`
}

// maxInfoProcs is how many process names the table shows.
const maxInfoProcs = 16

// maxMetaGroup is how many metadata keys of one group (the keys sharing
// everything up to their last '.', such as a .pcf's "prv.type.N") the
// text shows before summarising the rest; maxDictShown is how many
// entries of a dictionary value (a JSON object, such as a .pcf's
// "prv.values.N") it shows.
const (
	maxMetaGroup = 12
	maxDictShown = 4
)

// summariseMeta returns the (key, value) rows of the text output for the
// metadata: a value that is a JSON object of more than maxDictShown
// entries (a .pcf's hundreds of event values) is shown as its count and
// first entries, and a group of more than maxMetaGroup keys as its first
// keys and a count of the rest. --json keeps everything.
func summariseMeta(extra map[string]string) [][2]string {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareNatural)
	group := func(k string) string {
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			return k[:i+1]
		}
		return k
	}
	count := map[string]int{}
	for _, k := range keys {
		count[group(k)]++
	}
	var rows [][2]string
	shown := map[string]int{}
	for _, k := range keys {
		g := group(k)
		if count[g] > maxMetaGroup {
			shown[g]++
			if shown[g] == maxMetaGroup {
				rows = append(rows, [2]string{"  …", fmt.Sprintf("%d more %s* keys (--json lists them all)", count[g]-maxMetaGroup+1, g)})
			}
			if shown[g] >= maxMetaGroup {
				continue
			}
		}
		rows = append(rows, [2]string{"meta " + k, summariseValue(extra[k])})
	}
	return rows
}

// summariseValue shortens a JSON object of more than maxDictShown
// entries to "N entries: k1 v1, k2 v2, … (--json lists them all)", its
// keys in natural order; any other value is returned as it is.
func summariseValue(v string) string {
	if !strings.HasPrefix(v, "{") {
		return v
	}
	var dict map[string]any
	if err := json.Unmarshal([]byte(v), &dict); err != nil || len(dict) <= maxDictShown {
		return v
	}
	keys := make([]string, 0, len(dict))
	for k := range dict {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareNatural)
	parts := make([]string, 0, maxDictShown)
	for _, k := range keys[:maxDictShown] {
		parts = append(parts, fmt.Sprintf("%s %v", k, dict[k]))
	}
	return fmt.Sprintf("%d entries: %s, … (--json lists them all)", len(dict), strings.Join(parts, ", "))
}

// compareNatural orders strings with their digit runs compared as
// numbers ("type.9" before "type.10").
func compareNatural(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

func newInfoReport(path string, m *store.Manifest) infoReport {
	h := &m.Header
	r := infoReport{
		Trace: path, FormatVersion: m.Version, Source: h.Meta.Source, Inputs: h.Meta.Inputs,
		Program: h.Meta.Program, Host: h.Meta.Host, ClockResolutionNS: h.Meta.ClockResolution,
		Records: m.Stats.Records, StatesUsed: m.Stats.StatesUsed,
		Regions: len(h.Regions), EventNames: len(h.Events),
		Sends: m.Stats.Sends, Recvs: m.Stats.Recvs, MessageBytes: m.Stats.MessageBytes,
		Collectives: m.Stats.Collectives, CollectiveBytes: m.Stats.CollectiveBytes,
		BBVIntervals: m.Stats.BBVIntervals, Repairs: h.Repairs, Tables: m.Tables, Files: m.Files, Extra: h.Meta.Extra,
		Procs: h.Procs,
	}
	for _, rs := range m.Stats.Runs {
		ir := infoRun{RunSummary: overview.RunSummary{Run: rs.Run, Procs: rs.Procs, Records: rs.Records, BeginNS: rs.TMin, EndNS: rs.TMax},
			StatesUsed: rs.StatesUsed}
		if rs.Run >= 0 && int(rs.Run) < len(h.Runs) {
			ir.Name = h.Runs[rs.Run].Name
		}
		r.Runs = append(r.Runs, ir)
	}
	r.StatesFrom = engine.ResolveStates(&engine.Trace{Header: h, Stats: &m.Stats}, engine.StatesAuto)
	r.StatesFromText = r.StatesFrom.Describe()
	for _, s := range h.States {
		if s.Name != "" || s.Description != "" {
			r.StatesNamed++
		}
	}
	for _, n := range m.Stats.Records {
		r.TotalRecords += n
	}
	return r
}

func init() {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info TRACE",
		Short: "Summarise a trace: runs, processes, records by kind, time span, states, messages",
		Long: `Info summarises a .pst trace from its manifest: runs, processes, records
by kind, time span, states, messages, the repairs and warnings of its import,
and its tables. It first checks the tables the manifest lists: a table whose
Parquet footer or index disagrees with the manifest's row counts, or a file
that is missing or not a regular file, is reported as an error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Open checks what the manifest lists: every table's rows
			// against its Parquet footer and the index, and the record
			// counts against the tables.
			s, err := openTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			m := s.Manifest()
			rep := newInfoReport(args[0], m)
			if n, err := droppedByFilter(s.Store, &m.Header); err != nil {
				return err
			} else {
				rep.DroppedByFilter = n
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return printInfo(cmd, rep)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

func printInfo(cmd *cobra.Command, r infoReport) error {
	w := newTable(cmd.OutOrStdout())
	fmt.Fprintf(w, "trace\t%s\n", r.Trace)
	if r.Source != "" {
		fmt.Fprintf(w, "source\t%s (%d input file(s))\n", r.Source, len(r.Inputs))
	}
	if r.Program != "" {
		fmt.Fprintf(w, "program\t%s\n", r.Program)
	}
	if r.Host != "" {
		fmt.Fprintf(w, "host\t%s\n", r.Host)
	}
	fmt.Fprintf(w, "clock\t%s resolution\n", time.Duration(r.ClockResolutionNS))
	fmt.Fprintf(w, "runs\t%d\n", len(r.Runs))
	fmt.Fprintf(w, "records\t%s\n", human.Count(r.TotalRecords))
	kinds := make([]string, 0, len(r.Records))
	for _, k := range trace.Kinds {
		if n, ok := r.Records[k.String()]; ok {
			kinds = append(kinds, fmt.Sprintf("%s %s", human.Count(n), k))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(w, "  by kind\t%s\n", strings.Join(kinds, ", "))
	}
	if r.StatesUsed > 0 || r.StatesNamed > 0 {
		fmt.Fprintf(w, "states\t%d used, %d named in the dictionary\n", r.StatesUsed, r.StatesNamed)
	}
	if r.Regions > 0 {
		fmt.Fprintf(w, "regions\t%d code regions\n", r.Regions)
	}
	if r.Records[trace.KindState.String()] > 0 || r.Records[trace.KindEnter.String()] > 0 {
		fmt.Fprintf(w, "states from\t%s (--states-from %s)\n", r.StatesFromText, r.StatesFrom)
	}
	if r.Sends+r.Recvs > 0 {
		fmt.Fprintf(w, "messages\t%s sends, %s receives, %s sent\n", human.Count(r.Sends), human.Count(r.Recvs), human.Bytes(r.MessageBytes))
	}
	if r.Collectives > 0 {
		fmt.Fprintf(w, "collectives\t%s, %s\n", human.Count(r.Collectives), human.Bytes(r.CollectiveBytes))
	}
	if r.EventNames > 0 {
		fmt.Fprintf(w, "events\t%d distinct names\n", r.EventNames)
	}
	if r.BBVIntervals > 0 {
		fmt.Fprintf(w, "bbv\t%s intervals\n", human.Count(r.BBVIntervals))
	}
	if r.DroppedByFilter > 0 {
		fmt.Fprintf(w, "dropped\t%s events by a recording filter (their run lengths are kept)\n", human.Count(r.DroppedByFilter))
	}
	if len(r.Repairs) > 0 {
		var rs []string
		for k, n := range r.Repairs {
			rs = append(rs, fmt.Sprintf("%s %s", k, human.Count(n)))
		}
		slices.Sort(rs)
		fmt.Fprintf(w, "repairs\t%s\n", strings.Join(rs, ", "))
	}
	for _, line := range summariseMeta(r.Extra) {
		fmt.Fprintf(w, "%s\t%s\n", line[0], line[1])
	}
	shown := 0
	for _, p := range r.Procs {
		if !overview.Informative(p) {
			continue
		}
		if shown == maxInfoProcs {
			fmt.Fprintf(w, "  …\tmore process names (--json lists them all)\n")
			break
		}
		fmt.Fprintf(w, "process %d of run %d\t%s\n", p.Proc, p.Run, p.Name)
		shown++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(r.Runs) > 0 {
		fmt.Fprintln(cmd.OutOrStdout())
		w = newTable(cmd.OutOrStdout())
		fmt.Fprintln(w, "run\tprocs\trecords\tstart\tend\tspan\tstates used")
		for _, rs := range r.Runs {
			fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%d\n", rs.Run, rs.Procs, human.Count(rs.Records),
				time.Duration(rs.BeginNS), time.Duration(rs.EndNS), time.Duration(rs.EndNS-rs.BeginNS), rs.StatesUsed)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(cmd.OutOrStdout())
	w = newTable(cmd.OutOrStdout())
	fmt.Fprintln(w, "table\trows\trow groups\tsize")
	names := make([]string, 0, len(r.Tables))
	for n := range r.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t := r.Tables[n]
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", t.File, human.Count(t.Rows), t.RowGroups, human.Bytes(t.Bytes))
	}
	return w.Flush()
}

// droppedByFilter sums the counts of the instrument library's
// dropped-event records, reading only the events table, and only when the
// trace defines that event.
func droppedByFilter(s *store.Store, h *trace.Header) (int64, error) {
	id := int32(-1)
	for _, e := range h.Events {
		if e.Name == instrument.DroppedEvent {
			id = e.ID
		}
	}
	if id < 0 {
		return 0, nil
	}
	var n int64
	err := trace.Each(s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEvent}}), func(r *trace.Record) error {
		if r.ID == id {
			n += r.Value
		}
		return nil
	})
	return n, err
}
