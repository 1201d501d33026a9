package chrome

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// interval is a slice of a thread: an "X" event or a paired "B"/"E".
type interval struct {
	s, e int64
	id   int32
	seq  int64
}

// emitThread turns a thread's items into records and writes them: slices
// become nested region entries and exits (see the package documentation
// for the repairs), the rest keeps its kind.
func (im *importer) emitThread(run int32, t *thread, origin int64) error {
	items := t.items
	slices.SortStableFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.r.T, b.r.T); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	last := int64(math.MinInt64)
	for i := range items {
		last = max(last, items[i].r.T)
		if items[i].k == itSlice {
			last = max(last, items[i].r.End)
		}
	}
	var ivs []interval
	var open []item
	out := make([]trace.Record, 0, len(items)+len(items)/2)
	for _, it := range items {
		switch it.k {
		case itSlice:
			ivs = append(ivs, interval{it.r.T, it.r.End, it.r.ID, it.seq})
		case itBegin:
			open = append(open, it)
		case itEnd:
			i := len(open) - 1
			if it.r.ID != -1 {
				for i >= 0 && open[i].r.ID != it.r.ID {
					i--
				}
			}
			if i < 0 {
				im.h.Repair(RepairEndWithoutBegin, 1)
				continue
			}
			for j := len(open) - 1; j >= i; j-- {
				if j > i {
					im.h.Repair(RepairOutOfOrderEnd, 1)
				}
				ivs = append(ivs, interval{open[j].r.T, it.r.T, open[j].r.ID, open[j].seq})
			}
			open = open[:i]
		default:
			out = append(out, it.r)
		}
	}
	for j := len(open) - 1; j >= 0; j-- {
		im.h.Repair(RepairBeginWithoutEnd, 1)
		ivs = append(ivs, interval{open[j].r.T, last, open[j].r.ID, open[j].seq})
	}
	slices.SortFunc(ivs, func(a, b interval) int {
		if c := cmp.Compare(a.s, b.s); c != 0 {
			return c
		}
		if c := cmp.Compare(b.e, a.e); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	regs := make([]trace.Record, 0, 2*len(ivs))
	var st []interval
	for _, v := range ivs {
		for len(st) > 0 && st[len(st)-1].e <= v.s {
			top := st[len(st)-1]
			regs = append(regs, trace.Exit(run, t.proc, top.e, top.id))
			st = st[:len(st)-1]
		}
		if len(st) > 0 && v.e > st[len(st)-1].e {
			im.h.Repair(RepairOverlapClamped, 1)
			v.e = st[len(st)-1].e
		}
		regs = append(regs, trace.Enter(run, t.proc, v.s, v.id))
		st = append(st, v)
	}
	for len(st) > 0 {
		top := st[len(st)-1]
		regs = append(regs, trace.Exit(run, t.proc, top.e, top.id))
		st = st[:len(st)-1]
	}
	regs = append(regs, out...)
	slices.SortStableFunc(regs, func(a, b trace.Record) int { return cmp.Compare(a.T, b.T) })
	for i := range regs {
		r := &regs[i]
		r.Run, r.Proc = run, t.proc
		r.T -= origin
		if r.Kind == trace.KindSend || r.Kind == trace.KindRecv {
			r.End -= origin
		}
		if err := im.w.Add(*r); err != nil {
			return fmt.Errorf("chrome: %s: %w", im.file_, err)
		}
	}
	t.items = nil
	return nil
}

// parscopeArgs reads, from the args of an "X" or "B" event of the
// parscope exporter's categories, what the parscope layout needs: state
// and region ids and definitions, and the fields of sends, receives and
// collectives. Other events are left alone.
func (im *importer) parscopeArgs(it *item) {
	e := &im.ev
	switch string(e.cat) {
	case "state":
		id, ok := e.argInt("state")
		if !ok || e.ph[0] != 'X' || id < math.MinInt32 || id > math.MaxInt32 {
			return
		}
		it.cls, it.alt = clsState, int32(id)
		if _, seen := im.pStates[it.alt]; !seen {
			d := trace.StateDef{ID: it.alt, Name: string(e.name)}
			d.Description, _ = e.argStr("description")
			if loc, ok := e.argStr("location"); ok {
				d.File, d.Line = splitLocation(loc)
			}
			im.pStates[it.alt] = d
		}
	case "region":
		id, ok := e.argInt("region")
		if !ok || e.ph[0] != 'B' || id < math.MinInt32 || id > math.MaxInt32 {
			return
		}
		it.cls, it.alt = clsRegion, int32(id)
		if _, seen := im.pRegions[it.alt]; !seen {
			d := trace.RegionDef{ID: it.alt, Label: string(e.name), Parent: -1}
			if k, ok := e.argStr("kind"); ok {
				if kind, err := trace.ParseRegionKind(k); err == nil {
					d.Kind = kind
				}
			}
			d.Function, _ = e.argStr("function")
			if loc, ok := e.argStr("location"); ok {
				d.File, d.Line = splitLocation(loc)
			}
			im.pRegions[it.alt] = d
		}
	case "mpi":
		if e.ph[0] != 'X' {
			return
		}
		name := string(e.name)
		r := &it.r
		i32 := func(key string, def int32) int32 {
			if v, ok := e.argInt(key); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
				return int32(v)
			}
			return def
		}
		switch {
		case strings.HasPrefix(name, "send → "):
			r.Kind = trace.KindSend
		case strings.HasPrefix(name, "recv ← "):
			r.Kind = trace.KindRecv
		default:
			op, ok := trace.ParseCollectiveOp(name)
			if !ok {
				return
			}
			r.Kind = trace.KindCollective
			it.alt = int32(op)
		}
		it.cls = clsMPI
		if r.Kind == trace.KindCollective {
			r.Peer = i32("root", trace.NoPeer)
		} else {
			r.Peer = i32("peer", trace.NoPeer)
			r.Tag = i32("tag", 0)
			r.Seq = i32("request", trace.NoRequest)
		}
		r.Value, _ = e.argInt("bytes")
		r.Comm = i32("comm", 0)
		r.Flags = uint8(i32("flags", 0))
		if v, _ := e.argStr("end_unknown"); v == "true" {
			r.End = 0
		}
	}
}

// splitLocation splits "file:line" (line optional).
func splitLocation(loc string) (string, int32) {
	if i := strings.LastIndexByte(loc, ':'); i >= 0 {
		if n, err := strconv.ParseInt(loc[i+1:], 10, 32); err == nil && n > 0 {
			return loc[:i], int32(n)
		}
	}
	return loc, 0
}

// parseRunProc parses the exporter's process name "run R · proc P", with
// an optional " · NAME".
func parseRunProc(s string) (run, proc int32, name string, ok bool) {
	rest, found := strings.CutPrefix(s, "run ")
	if !found {
		return
	}
	r, rest, found := strings.Cut(rest, " · proc ")
	if !found {
		return
	}
	p, name, _ := strings.Cut(rest, " · ")
	rn, err1 := strconv.ParseInt(r, 10, 32)
	pn, err2 := strconv.ParseInt(p, 10, 32)
	if err1 != nil || err2 != nil || rn < 0 || pn < 0 {
		return
	}
	return int32(rn), int32(pn), name, true
}

// parscopeLayout reports whether every process with events is named as
// the parscope exporter names them, and gives each its run and process.
func (im *importer) parscopeLayout() bool {
	for _, p := range im.pids {
		has := false
		for _, t := range p.threads {
			has = has || len(t.items) > 0
		}
		if !has {
			continue
		}
		r, pr, _, ok := parseRunProc(p.name)
		if !ok {
			return false
		}
		p.run, p.proc = r, pr
	}
	return true
}

// emitParscope writes a file the parscope exporter wrote back as the
// records it came from (see the package documentation): each pid is one
// process of the run and process its name gives, after the runs before
// base; states, regions, messages, collectives, events and counters are
// read from their categories and args; flow arrows, which the exporter
// draws from the messages, are dropped.
func (im *importer) emitParscope(base int32) error {
	// The region and event names of this file were entered into the
	// generic dictionaries while reading; the layout's own ids replace
	// them.
	im.rollback()
	for id, d := range im.pRegions {
		if old, ok := im.regDefs[id]; ok && old.Label != d.Label {
			return fmt.Errorf("chrome: %s: region %d is %q here and %q in an earlier input", im.file_, id, format.Excerpt([]byte(d.Label)), format.Excerpt([]byte(old.Label)))
		}
		im.regDefs[id] = d
		im.regions[d.Label] = id
		im.nextReg = max(im.nextReg, id+1)
	}
	for id, d := range im.pStates {
		im.stDefs[id] = d
	}
	procs := make([]*process, 0, len(im.pids))
	for _, p := range im.pids {
		procs = append(procs, p)
	}
	slices.SortFunc(procs, func(a, b *process) int {
		if c := cmp.Compare(a.run, b.run); c != 0 {
			return c
		}
		return cmp.Compare(a.proc, b.proc)
	})
	// Every process of the file is known before any record is written, so
	// that a message's peer can be checked against its run.
	runProcs := map[int32]int32{}
	for _, p := range procs {
		if run, proc, _, ok := parseRunProc(p.name); ok {
			runProcs[run+base] = max(runProcs[run+base], proc+1)
		}
	}
	h := im.h
	for _, p := range procs {
		var items []item
		for _, t := range p.threads {
			items = append(items, t.items...)
			t.items = nil
		}
		if len(items) == 0 && p.name == "" {
			continue
		}
		run, proc, name, ok := parseRunProc(p.name)
		if !ok {
			continue
		}
		run += base
		h.EnsureRun(run, proc+1)
		if p.labels != "" {
			h.Runs[run].Name = p.labels
		}
		if name != "" {
			h.Procs = append(h.Procs, trace.ProcInfo{Run: run, Proc: proc, Name: name})
		}
		slices.SortStableFunc(items, func(a, b item) int {
			if c := cmp.Compare(a.r.T, b.r.T); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		var open []int32
		recs := make([]trace.Record, 0, len(items))
		for _, it := range items {
			r := it.r
			switch {
			case it.k == itSlice && it.cls == clsState:
				r = trace.State(run, proc, r.T, it.alt)
			case it.k == itSlice && it.cls == clsMPI:
				if r.Kind == trace.KindCollective {
					r.ID = it.alt
					r.Tag, r.Seq = 0, trace.NoRequest
				}
				if !peerInRun(&r, runProcs[run]) {
					h.Repair(RepairPeerOutsideRun, 1)
					continue
				}
			case it.k == itBegin && it.cls == clsRegion:
				r = trace.Enter(run, proc, r.T, it.alt)
				open = append(open, it.alt)
			case it.k == itEnd:
				if len(open) == 0 {
					h.Repair(RepairEndWithoutBegin, 1)
					continue
				}
				r = trace.Exit(run, proc, r.T, open[len(open)-1])
				open = open[:len(open)-1]
			case it.k == itRecord && r.Kind == trace.KindEvent && it.cls == clsEvent:
				r.ID = it.alt
				if name := im.pEventNames[it.alt]; name != "" {
					if _, ok := im.events[name]; !ok {
						im.events[name] = it.alt
						im.nextEv = max(im.nextEv, it.alt+1)
					}
				}
			case it.k == itRecord && r.Kind == trace.KindCounter:
			default:
				continue // flows and what the exporter does not write
			}
			r.Run, r.Proc = run, proc
			recs = append(recs, r)
		}
		for range open {
			h.Repair(RepairBeginWithoutEnd, 1)
		}
		slices.SortStableFunc(recs, func(a, b trace.Record) int { return cmp.Compare(a.T, b.T) })
		for _, r := range recs {
			if err := im.w.Add(r); err != nil {
				return fmt.Errorf("chrome: %s: %w", im.file_, err)
			}
		}
	}
	im.warnIgnored()
	return nil
}

// peerInRun reports whether the peer of a message or collective r names a
// process of its run of procs processes: a send needs one; a receive from
// an unknown source and a collective without a root have NoPeer.
func peerInRun(r *trace.Record, procs int32) bool {
	if r.Peer == trace.NoPeer {
		return r.Kind != trace.KindSend
	}
	return r.Peer >= 0 && r.Peer < procs
}
