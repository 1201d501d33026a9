package mpi

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Source is the Meta.Source of traces Merge writes.
const Source = "mpi"

// Repairs Merge counts in the trace header (trace.Header.Repair).
const (
	// RepairPartialFile counts rank files that end without MPI_Finalize's
	// record (the rank died or exited early).
	RepairPartialFile = "mpi-partial-rank-file"
	// RepairUncompleted counts non-blocking messages no Wait or Test
	// completed; their End is 0 (unknown).
	RepairUncompleted = "mpi-uncompleted-request"
	// RepairAnySource counts MPI_ANY_SOURCE receives whose source was
	// taken from their status.
	RepairAnySource = "any-source-recv"
)

// CallSiteMode says whether Merge turns MPI calls into regions.
type CallSiteMode uint8

const (
	// CallSitesAuto makes call-site regions only when no rank marked a
	// user region, so that a trace without markers still has a tree.
	CallSitesAuto CallSiteMode = iota
	// CallSitesOn makes a region of kind "call" of every MPI call,
	// labelled "MPI_Send give3 mg.c:120", nested in the user regions.
	CallSitesOn
	// CallSitesOff makes none.
	CallSitesOff
)

// ParseCallSiteMode parses "auto", "on" or "off".
func ParseCallSiteMode(s string) (CallSiteMode, error) {
	switch s {
	case "auto", "":
		return CallSitesAuto, nil
	case "on":
		return CallSitesOn, nil
	case "off":
		return CallSitesOff, nil
	}
	return 0, fmt.Errorf("call sites %q: want auto, on or off", s)
}

// Options tune Merge.
type Options struct {
	CallSites CallSiteMode
	// Program and CommandLine go into the trace's metadata.
	Program     string
	CommandLine []string
}

// FileReport describes one rank file.
type FileReport struct {
	Rank   int32  `json:"rank"`
	File   string `json:"file"`
	Events int    `json:"events"`
	// Complete is set when the file ends with MPI_Finalize's record.
	Complete bool `json:"complete"`
	// Truncated is set when the file ends inside a record.
	Truncated bool  `json:"truncated,omitempty"`
	Bytes     int64 `json:"bytes"`
}

// Report is what Merge found. Nothing is dropped without being counted
// here.
type Report struct {
	Ranks int    `json:"ranks"`
	MPI   string `json:"mpi,omitempty"`
	// Files are the rank files in rank order; MissingRanks the ranks of
	// the run with no file.
	Files        []FileReport `json:"files"`
	MissingRanks []int32      `json:"missing_ranks,omitempty"`
	Sends        int64        `json:"sends"`
	Recvs        int64        `json:"recvs"`
	Collectives  int64        `json:"collectives"`
	RegionMarks  int64        `json:"region_marks"`
	Regions      int          `json:"regions"`
	CallSites    bool         `json:"call_site_regions"`
	// Matched counts sends and receives that paired up;
	// UnmatchedSends/Recvs those that did not (Unmatched shows up to 20).
	Matched        int64    `json:"matched"`
	UnmatchedSends int64    `json:"unmatched_sends"`
	UnmatchedRecvs int64    `json:"unmatched_recvs"`
	Unmatched      []string `json:"unmatched,omitempty"`
	// AnySource counts receives posted with MPI_ANY_SOURCE;
	// AnySourceResolved those whose source the status gave.
	AnySource         int64 `json:"any_source"`
	AnySourceResolved int64 `json:"any_source_resolved"`
	// Uncompleted counts non-blocking messages never completed.
	Uncompleted int64 `json:"uncompleted"`
	// ProcNull counts calls to or from MPI_PROC_NULL (no message).
	ProcNull int64 `json:"proc_null,omitempty"`
	// OutsideComm counts peers and roots that are not ranks of their
	// communicator (or not in MPI_COMM_WORLD); Outside shows up to 20.
	OutsideComm int64    `json:"outside_comm"`
	Outside     []string `json:"outside,omitempty"`
	// UnknownComm counts events on a communicator the rank never defined.
	UnknownComm int64 `json:"unknown_comm,omitempty"`
	// UnknownRequest counts completions of requests no recorded call
	// posted (persistent or collective requests).
	UnknownRequest int64 `json:"unknown_request,omitempty"`
	// UnresolvedSites counts distinct call sites without a source line.
	UnresolvedSites int `json:"unresolved_sites,omitempty"`
	Communicators   int `json:"communicators"`
}

const maxExamples = 20

func (r *Report) outside(format string, args ...any) {
	r.OutsideComm++
	if len(r.Outside) < maxExamples {
		r.Outside = append(r.Outside, fmt.Sprintf(format, args...))
	}
}

// RankFiles returns the rank files in dir, sorted by name.
func RankFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "rank-*.psmpi"))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b string) int {
		ra, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(a), "rank-"), ".psmpi"))
		rb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(b), "rank-"), ".psmpi"))
		return ra - rb
	})
	return files, nil
}

// ReadFiles reads and decodes rank files, checking that they belong to one
// run (the same world size, no rank twice).
func ReadFiles(paths []string) ([]*RankFile, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("mpi: no rank files to merge")
	}
	var out []*RankFile
	byRank := map[int32]string{}
	for _, p := range paths {
		data, err := regular.ReadFile(p)
		if err != nil {
			return nil, &format.Error{File: p, Offset: -1, Msg: "cannot read the rank file", Err: err}
		}
		if len(data) == 0 {
			continue // a rank that died before MPI_Init finished: reported as missing
		}
		rf, err := ReadRank(p, data)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && rf.Header.Size != out[0].Header.Size {
			return nil, format.OffsetError(p, 16, "world size %d, but %s has %d: files of different runs", rf.Header.Size,
				out[0].Name, out[0].Header.Size)
		}
		if prev, ok := byRank[rf.Header.Rank]; ok {
			return nil, format.OffsetError(p, 12, "rank %d again (also in %s)", rf.Header.Rank, prev)
		}
		byRank[rf.Header.Rank] = p
		out = append(out, rf)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mpi: every rank file is empty (%s ...): no rank got through MPI_Init", paths[0])
	}
	slices.SortFunc(out, func(a, b *RankFile) int { return int(a.Header.Rank - b.Header.Rank) })
	return out, nil
}

// communicator is a communicator of the run.
type communicator struct {
	id      int32
	members []int32
}

type siteKey struct {
	fn   Func
	site string
}

// merger holds the dictionaries shared by the ranks.
type merger struct {
	rep       *Report
	res       *Resolver
	regions   []trace.RegionDef
	byName    map[string]int32
	bySite    map[siteKey]int32
	sites     map[uint64]Site // per rank, reset
	unres     map[string]bool
	comms     map[string]int32
	commDefs  []trace.CommDef
	callSites bool
	origin    int64
}

// Merge reads the rank files at paths and writes them to w as run 0 of a
// trace with one process per rank of MPI_COMM_WORLD. It returns what it
// found; a partial file (a rank that died) merges up to its last complete
// record and is reported, not an error.
func Merge(ctx context.Context, paths []string, w trace.Writer, opts Options) (*Report, error) {
	files, err := ReadFiles(paths)
	if err != nil {
		return nil, err
	}
	return mergeFiles(ctx, files, w, opts)
}

// mergeFiles is Merge on decoded files of one run, in rank order.
func mergeFiles(ctx context.Context, files []*RankFile, w trace.Writer, opts Options) (*Report, error) {
	n := files[0].Header.Size
	rep := &Report{Ranks: int(n), MPI: strings.Join(strings.Fields(files[0].Info["mpi"]), " ")}
	m := &merger{rep: rep, res: NewResolver(), byName: map[string]int32{}, bySite: map[siteKey]int32{},
		unres: map[string]bool{}, comms: map[string]int32{}}
	m.callSites = opts.CallSites == CallSitesOn
	if opts.CallSites == CallSitesAuto {
		m.callSites = true
		for _, f := range files {
			for i := range f.Events {
				if f.Events[i].Type == RecBegin {
					m.callSites = false
					break
				}
			}
		}
	}
	rep.CallSites = m.callSites
	m.origin = files[0].Header.Realtime
	for _, f := range files {
		m.origin = min(m.origin, f.Header.Realtime)
	}
	h := w.Header()
	h.Meta.Source = Source
	h.Meta.ClockResolution = 1
	h.Meta.Program = opts.Program
	h.Meta.CommandLine = opts.CommandLine
	h.Meta.Host = files[0].Info["host"]
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	if rep.MPI != "" {
		h.Meta.Extra["mpi"] = rep.MPI
	}
	if exe := files[0].Info["exe"]; exe != "" {
		h.Meta.Extra["executable"] = exe
		if h.Meta.Program == "" {
			h.Meta.Program = filepath.Base(exe)
		}
	}
	h.EnsureRun(0, n)
	have := map[int32]bool{}
	perRank := make([][]trace.Record, 0, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h.Meta.Inputs = append(h.Meta.Inputs, f.Name)
		have[f.Header.Rank] = true
		recs, err := m.rank(f)
		if err != nil {
			return nil, err
		}
		perRank = append(perRank, recs)
		rep.Files = append(rep.Files, FileReport{Rank: f.Header.Rank, File: f.Name, Events: len(f.Events),
			Complete: f.Complete, Truncated: f.Truncated, Bytes: f.Size})
		state := "complete"
		if !f.Complete {
			state = "partial"
			h.Repair(RepairPartialFile, 1)
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: f.Header.Rank, Name: fmt.Sprintf("rank %d", f.Header.Rank),
			Extra: map[string]string{"file": f.Name, "pid": strconv.Itoa(int(f.Header.PID)), "host": f.Info["host"], "state": state}})
	}
	for r := int32(0); r < n; r++ {
		if !have[r] {
			rep.MissingRanks = append(rep.MissingRanks, r)
			h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: r, Name: fmt.Sprintf("rank %d", r),
				Extra: map[string]string{"state": "missing"}})
		}
	}
	slices.SortFunc(h.Procs, func(a, b trace.ProcInfo) int { return int(a.Proc - b.Proc) })
	h.Regions = append(h.Regions, m.regions...)
	h.Comms = append(h.Comms, m.commDefs...)
	rep.Regions = len(m.regions)
	rep.Communicators = len(m.commDefs)
	rep.UnresolvedSites = len(m.unres)
	if rep.Uncompleted > 0 {
		h.Repair(RepairUncompleted, rep.Uncompleted)
	}
	if rep.AnySourceResolved > 0 {
		h.Repair(RepairAnySource, rep.AnySourceResolved)
	}

	// Write in time order and match the two sides of every message.
	var match trace.Matcher
	match.OnMatch = func(_, _ *trace.Record) { rep.Matched++ }
	readers := make([]trace.Reader, len(perRank))
	for i, recs := range perRank {
		readers[i] = trace.NewSliceReader(recs)
	}
	err := trace.Each(trace.Merge(readers...), func(r *trace.Record) error {
		match.Add(r)
		return w.Add(*r)
	})
	if err != nil {
		return nil, err
	}
	sends, recvs := match.Unmatched()
	rep.UnmatchedSends, rep.UnmatchedRecvs = int64(len(sends)), int64(len(recvs))
	all := append(sends, recvs...)
	slices.SortStableFunc(all, trace.Compare)
	for i := range all {
		if i == maxExamples {
			break
		}
		rep.Unmatched = append(rep.Unmatched, all[i].String())
	}
	return rep, nil
}

// commKey identifies a communicator across ranks: its members and how many
// communicators with the same members the rank defined before it (creation
// is collective, so every member numbers them alike).
func commKey(members []int32, k int) string {
	var b strings.Builder
	for _, x := range members {
		b.WriteString(strconv.Itoa(int(x)))
		b.WriteByte(',')
	}
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(k))
	return b.String()
}

func regionKind(name string) trace.RegionKind {
	l := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(l, "loop"):
		return trace.RegionLoop
	case strings.HasPrefix(l, "if"):
		return trace.RegionIf
	case strings.HasPrefix(l, "function") || strings.HasPrefix(l, "func "):
		return trace.RegionFunction
	}
	return trace.RegionUser
}

func (m *merger) site(f *RankFile, pc uint64) Site {
	if s, ok := m.sites[pc]; ok {
		return s
	}
	s, _ := m.res.Resolve(f.Maps, pc)
	if s.Line == 0 {
		m.unres[fmt.Sprintf("%s+%#x", s.Object, pc)] = true
	}
	m.sites[pc] = s
	return s
}

// userRegion returns the region id of a marked region's name.
func (m *merger) userRegion(f *RankFile, name string, pc uint64) int32 {
	if id, ok := m.byName[name]; ok {
		return id
	}
	id := int32(len(m.regions))
	s := m.site(f, pc)
	m.regions = append(m.regions, trace.RegionDef{ID: id, Kind: regionKind(name), Label: name, Function: s.Function,
		File: s.File, Line: int32(s.Line), Parent: -1})
	m.byName[name] = id
	return id
}

// callRegion returns the region id of an MPI call site.
func (m *merger) callRegion(f *RankFile, fn Func, pc uint64) int32 {
	s := m.site(f, pc)
	k := siteKey{fn, s.String()}
	if id, ok := m.bySite[k]; ok {
		return id
	}
	id := int32(len(m.regions))
	m.regions = append(m.regions, trace.RegionDef{ID: id, Kind: trace.RegionCall, Label: fn.String() + " " + s.String(),
		Function: s.Function, File: s.File, Line: int32(s.Line), Parent: -1})
	m.bySite[k] = id
	return id
}

// rank turns one rank file into its records, in time order.
func (m *merger) rank(f *RankFile) ([]trace.Record, error) {
	rank := f.Header.Rank
	rep := m.rep
	m.sites = map[uint64]Site{}
	local := map[uint32]*communicator{}
	seen := map[string]int{}
	for _, c := range f.Comms {
		base := commKey(c.Members, 0)
		k := commKey(c.Members, seen[base])
		seen[base]++
		id, ok := m.comms[k]
		if !ok {
			id = int32(len(m.commDefs))
			m.comms[k] = id
			def := trace.CommDef{ID: id, Members: slices.Clone(c.Members)}
			if c.ID == 0 {
				def.Name = "MPI_COMM_WORLD"
			}
			m.commDefs = append(m.commDefs, def)
		}
		local[c.ID] = &communicator{id: id, members: c.Members}
	}
	ns := func(t int64) int64 {
		v := t - f.Header.Monotonic + f.Header.Realtime - m.origin
		return max(v, 0)
	}
	// world translates a communicator rank; ok is false (and the problem
	// counted) when it is not a rank of the communicator.
	world := func(e *Event, c *communicator, p int32, what string) (int32, bool) {
		if p < 0 || int(p) >= len(c.members) || c.members[p] < 0 || c.members[p] >= int32(m.rep.Ranks) {
			rep.outside("rank %d, %s at byte %d: %s %d is not a rank of communicator %d (%d members)",
				rank, e.Func, e.Offset, what, p, c.id, len(c.members))
			return 0, false
		}
		return c.members[p], true
	}
	var recs []trace.Record
	// request -> indices in recs, oldest first: a handle is not unique
	// (MPICH hands out one handle for every send that completed at once).
	pending := map[uint64][]int{}
	var seq int32
	// The open call-site region: exited before the next call (Sendrecv's
	// two halves share one).
	open, openSite, openT, openEnd := int32(-1), uint64(0), int64(0), int64(0)
	// Times never go back, and a region's exit comes strictly after the
	// messages inside it: the store reads regions before messages at equal
	// times, so an exit at a message's time would leave the message out.
	floor, lastMsg := int64(0), int64(-1)
	exit := func(t int64, id int32) {
		t = max(t, lastMsg+1, floor)
		floor = t
		recs = append(recs, trace.Exit(0, rank, t, id))
	}
	message := func(r trace.Record) {
		lastMsg = max(lastMsg, r.T)
		recs = append(recs, r)
	}
	closeCall := func() {
		if open >= 0 {
			exit(openEnd, open)
			open = -1
		}
	}
	enterCall := func(e *Event, t, end int64) {
		if !m.callSites {
			return
		}
		if open >= 0 && e.Site == openSite && t == openT {
			openEnd = max(openEnd, end)
			return
		}
		closeCall()
		t = max(t, floor)
		open, openSite, openT, openEnd = m.callRegion(f, e.Func, e.Site), e.Site, t, end
		floor = t
		recs = append(recs, trace.Enter(0, rank, t, open))
	}
	for i := range f.Events {
		e := &f.Events[i]
		t := max(ns(e.T), floor)
		end := t
		if e.End != 0 {
			end = max(ns(e.End), t)
		}
		var c *communicator
		switch e.Type {
		case RecSend, RecRecv, RecIsend, RecIrecv, RecColl:
			c = local[e.Comm]
			if c == nil {
				rep.UnknownComm++
				continue
			}
		}
		switch e.Type {
		case RecBegin, RecEnd:
			closeCall()
			t = max(t, floor)
			name, ok := f.Strings[uint32(e.Tag)]
			if !ok {
				name = fmt.Sprintf("region %d", e.Tag)
			}
			id := m.userRegion(f, name, e.Site)
			rep.RegionMarks++
			if e.Type == RecBegin {
				floor = t
				recs = append(recs, trace.Enter(0, rank, t, id))
			} else {
				exit(t, id)
			}
		case RecCall:
			enterCall(e, t, end)
		case RecSend, RecIsend:
			enterCall(e, t, end)
			t = max(t, floor)
			if e.Peer == PeerNull {
				rep.ProcNull++
				continue
			}
			dst, ok := world(e, c, e.Peer, "destination")
			if !ok {
				continue
			}
			r := trace.Send(0, rank, t, end, dst, e.Bytes, e.Tag, c.id)
			rep.Sends++
			if e.Type == RecIsend {
				r.End = 0
				r.Seq = seq
				seq++
				pending[e.Request] = append(pending[e.Request], len(recs))
			}
			message(r)
		case RecRecv, RecIrecv:
			enterCall(e, t, end)
			t = max(t, floor)
			if e.Peer == PeerNull {
				rep.ProcNull++
				continue
			}
			r := trace.Recv(0, rank, t, end, trace.NoPeer, e.Bytes, e.Tag, c.id)
			if e.Peer == PeerAny {
				r.Flags |= trace.FlagAnySource
				rep.AnySource++
			} else if src, ok := world(e, c, e.Peer, "source"); ok {
				r.Peer = src
			} else {
				continue
			}
			rep.Recvs++
			if e.Type == RecIrecv {
				r.End = 0
				r.Seq = seq
				seq++
				pending[e.Request] = append(pending[e.Request], len(recs))
				message(r)
				continue
			}
			m.status(&r, e, c)
			message(r)
		case RecComplete:
			q := pending[e.Request]
			if len(q) == 0 {
				rep.UnknownRequest++
				continue
			}
			at := q[0]
			if len(q) == 1 {
				delete(pending, e.Request)
			} else {
				pending[e.Request] = q[1:]
			}
			r := &recs[at]
			if e.Func == fnRequestFree {
				// freed: the message completes at an unknown time
				rep.Uncompleted++
				continue
			}
			r.End = max(t, r.T)
			if r.Kind == trace.KindRecv {
				r.Value = e.Bytes
				m.status(r, e, m.commOf(local, r.Comm))
			}
		case RecColl:
			op, ok := e.Func.Collective()
			enterCall(e, t, end)
			t = max(t, floor)
			end = max(end, t)
			if !ok {
				continue
			}
			root := trace.NoPeer
			if e.Peer >= 0 {
				w, ok := world(e, c, e.Peer, "root")
				if !ok {
					continue
				}
				root = w
			}
			message(trace.Coll(0, rank, t, end, op, root, e.Bytes, c.id))
			rep.Collectives++
		}
	}
	closeCall()
	for _, q := range pending {
		rep.Uncompleted += int64(len(q))
	}
	slices.SortStableFunc(recs, func(a, b trace.Record) int { return cmp.Compare(a.T, b.T) })
	return recs, nil
}

func (m *merger) commOf(local map[uint32]*communicator, id int32) *communicator {
	for _, c := range local {
		if c.id == id {
			return c
		}
	}
	return &communicator{id: id}
}

// status resolves a receive's MPI_ANY_SOURCE and MPI_ANY_TAG from the
// status of the event that completed it.
func (m *merger) status(r *trace.Record, e *Event, c *communicator) {
	if r.Flags&trace.FlagAnySource != 0 {
		if e.Src >= 0 && int(e.Src) < len(c.members) && c.members[e.Src] >= 0 && c.members[e.Src] < int32(m.rep.Ranks) {
			r.Peer = c.members[e.Src]
			r.Flags &^= trace.FlagAnySource
			m.rep.AnySourceResolved++
		}
	}
	if r.Tag == PeerAny && e.StatusTg >= 0 {
		r.Tag = e.StatusTg
	}
}
