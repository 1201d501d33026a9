// Package profile computes the profiles a performance engineer reads
// first: where each process spent its time, by code region, flat and as
// a call tree, with the time of a region split into inclusive time (from
// entry to exit) and exclusive time (inclusive minus the time of the
// regions it entered), the number of visits, and the spread of each over
// the processes (minimum, mean, maximum and which process). A trace
// without regions is profiled by its states: a state is a region of its
// own, entered at its record and left at the process's next state record.
//
// It also summarises the point-to-point messages: how many and how many
// bytes, by size bucket, by the region that sent them and by pair of
// processes.
//
// The profile is an analysis of package engine ("profile"): every face
// (`parscope profile`, the report, parscope serve) formats the one Result.
package profile

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the profile analysis' name in the engine's registry.
const Name = "profile"

// Sort orders of Params.Sort.
const (
	SortExclusive = "exclusive"
	SortInclusive = "inclusive"
	SortVisits    = "visits"
	SortName      = "name"
)

// Params are the options of the profile analysis.
type Params struct {
	// Top bounds the flat profile's rows and the pairs of the message
	// statistics to the first Top in Sort order (0 keeps all).
	Top int `json:"top" flag:"top" help:"keep the first N regions of the flat profile and N pairs of the message statistics (0: all)"`
	// Sort orders the flat profile: exclusive, inclusive, visits or name.
	Sort string `json:"sort" flag:"sort" help:"order of the flat profile: exclusive, inclusive, visits or name"`
	// Of profiles "regions", "states", or "" for regions when the trace
	// has region records, else states.
	Of string `json:"of,omitempty" flag:"of" help:"profile regions or states (default: regions when the trace has them, else states)"`
	// PerProcess adds, to each flat row, its figures for every process.
	PerProcess bool `json:"per_process" flag:"per-process" help:"also give each region's figures for every process"`
	// MaxNodes bounds the call tree (the nodes of the largest inclusive
	// time are kept; 0 keeps all).
	MaxNodes int `json:"max_nodes" flag:"max-nodes" help:"keep at most this many call-tree nodes, those of the largest inclusive time (0: all)"`
}

// DefaultTop and DefaultMaxNodes are the defaults of Params.Top and
// Params.MaxNodes.
const (
	DefaultTop      = 30
	DefaultMaxNodes = 2000
)

// DefaultParams returns the default options.
func DefaultParams() *Params {
	return &Params{Top: DefaultTop, Sort: SortExclusive, MaxNodes: DefaultMaxNodes}
}

// Result is the profile of each run of the trace.
type Result struct {
	// Of is what was profiled: "regions" or "states".
	Of string `json:"of"`
	// Runs holds one profile per run, in run order.
	Runs []RunProfile `json:"runs"`
}

// RunProfile is the profile of one run.
type RunProfile struct {
	Run int32 `json:"run"`
	// Procs is the number of processes of the run that recorded a region
	// (or state).
	Procs int `json:"procs"`
	// TotalNS is the sum over those processes of their time from their
	// first region (or state) record to their last record: the time the
	// shares divide.
	TotalNS int64 `json:"total_ns"`
	// OutsideNS is the part of TotalNS outside every region: TotalNS
	// minus the exclusive time of every region.
	OutsideNS int64 `json:"outside_ns"`
	// Flat is the flat profile, sorted by Params.Sort; FlatOmitted counts
	// the rows Params.Top left out.
	Flat        []Entry `json:"flat"`
	FlatOmitted int     `json:"flat_omitted"`
	// Tree is the call tree aggregated over processes, parents before
	// their children; TreeOmitted counts the nodes Params.MaxNodes left
	// out (their time stays in their ancestors' inclusive time).
	Tree        []Node `json:"tree"`
	TreeOmitted int    `json:"tree_omitted"`
	// Messages summarises the run's point-to-point messages.
	Messages Messages `json:"messages"`
	// Problems counts what the records got wrong.
	Problems Problems `json:"problems"`
}

// Entry is one region's row of the flat profile.
type Entry struct {
	// Region is the region's (or state's) id; Name its label.
	Region int32  `json:"region"`
	Name   string `json:"name"`
	// Visits counts the entries; Procs the processes that entered it.
	Visits int64 `json:"visits"`
	Procs  int   `json:"procs"`
	// InclusiveNS sums, over processes, the time from each outermost
	// entry to its exit (a recursive call is not counted twice);
	// ExclusiveNS the time the region was the innermost one.
	InclusiveNS int64 `json:"inclusive_ns"`
	ExclusiveNS int64 `json:"exclusive_ns"`
	// ExclusiveShare is ExclusiveNS over the run's TotalNS.
	ExclusiveShare float64 `json:"exclusive_share"`
	// Inclusive and Exclusive are the spread of the per-process times
	// over the run's processes (a process that never entered the region
	// counts as 0).
	Inclusive Spread `json:"inclusive"`
	Exclusive Spread `json:"exclusive"`
	// ByProcess holds the figures of each process (with PerProcess).
	ByProcess []ProcEntry `json:"by_process,omitempty"`
}

// Spread is the minimum, mean and maximum of a figure over processes,
// with the processes of the minimum and maximum (the first on ties).
type Spread struct {
	MinNS   int64   `json:"min_ns"`
	MeanNS  float64 `json:"mean_ns"`
	MaxNS   int64   `json:"max_ns"`
	MinProc int32   `json:"min_proc"`
	MaxProc int32   `json:"max_proc"`
}

// ProcEntry is one process's figures for a region.
type ProcEntry struct {
	Proc        int32 `json:"proc"`
	Visits      int64 `json:"visits"`
	InclusiveNS int64 `json:"inclusive_ns"`
	ExclusiveNS int64 `json:"exclusive_ns"`
}

// Node is one call path of the call tree, summed over processes.
type Node struct {
	// ID is the node's index in Tree; Parent its parent's (−1 for a
	// root); Depth its depth (0 for a root).
	ID     int   `json:"id"`
	Parent int   `json:"parent"`
	Depth  int   `json:"depth"`
	Region int32 `json:"region"`
	// Name is the region's label.
	Name        string `json:"name"`
	Visits      int64  `json:"visits"`
	Procs       int    `json:"procs"`
	InclusiveNS int64  `json:"inclusive_ns"`
	ExclusiveNS int64  `json:"exclusive_ns"`
}

// Messages summarises point-to-point messages by their send records.
type Messages struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
	// BySize counts them by size bucket: [0, 1), [1, 2), [2, 4), … bytes.
	BySize []SizeBucket `json:"by_size"`
	// ByRegion counts them by the region the sender was in (innermost;
	// "(none)" outside every region), most bytes first.
	ByRegion []RegionMessages `json:"by_region"`
	// ByPair counts them by sender and receiver, most bytes first;
	// PairsOmitted counts the pairs Params.Top left out.
	ByPair       []PairMessages `json:"by_pair"`
	PairsOmitted int            `json:"pairs_omitted"`
}

// SizeBucket counts the messages of MinBytes ≤ size < MaxBytes.
type SizeBucket struct {
	MinBytes int64 `json:"min_bytes"`
	MaxBytes int64 `json:"max_bytes"`
	Count    int64 `json:"count"`
	Bytes    int64 `json:"bytes"`
}

// RegionMessages counts the messages sent from one region.
type RegionMessages struct {
	Region int32  `json:"region"`
	Name   string `json:"name"`
	Count  int64  `json:"count"`
	Bytes  int64  `json:"bytes"`
}

// PairMessages counts the messages of one sender and receiver.
type PairMessages struct {
	Src   int32 `json:"src"`
	Dst   int32 `json:"dst"`
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Problems counts what the records got wrong; nothing is dropped silently.
type Problems struct {
	// UnmatchedExits are exits of a region the process was not in (left
	// out); MismatchedExits exits of a region below the innermost one,
	// which close the regions above it at that time.
	UnmatchedExits  int64 `json:"unmatched_exits,omitempty"`
	MismatchedExits int64 `json:"mismatched_exits,omitempty"`
	// Unclosed counts the regions still open at a process's last record
	// (closed there).
	Unclosed int64 `json:"unclosed,omitempty"`
}

// NoRegion is the Region of messages sent outside every region.
const NoRegion int32 = -1

func init() {
	engine.Register(&engine.Analysis{
		Name:     Name,
		Recorded: true,
		Doc:      "flat and call-tree profiles of regions (or states): inclusive and exclusive time, visits, spread over processes; message statistics",
		Needs:    []trace.Kind{trace.KindEnter, trace.KindState},
		Feeds:    func(any) []trace.Kind { return trace.TimedKinds() },
		Options:  func() any { return DefaultParams() },
		New:      func(t *engine.Trace, o any) (engine.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// frame is an open region of a process's stack.
type frame struct {
	region int32
	node   int   // call-tree node
	slot   int32 // the node's slot in its process's procAcc
	entry  int64 // entry time
}

// procAcc is the running profile of one process. It counts by call-tree
// node, in slots of its own (a process visits few of a run's nodes); the
// flat profile's figures per region are summed from the nodes at the end.
type procAcc struct {
	stack []frame
	first int64 // first region (state) record
	last  int64 // last record of any fed kind
	seen  bool
	// slotOf is the slot of each node the process entered, by its key;
	// node, visits, incl and excl hold, by slot, the node and its visits,
	// inclusive and exclusive time on the process.
	slotOf             map[treeKey]int32
	node               []int
	visits, incl, excl []int64
	at                 int64 // time up to which exclusive time is counted
}

// slot returns the slot of the call-tree node of region under the node
// parent (−1: a root) on the process, making the node and the slot.
func (pa *procAcc) slot(r *runAcc, parent int, region int32) (int32, int) {
	k := treeKey{parent, region}
	if sl, ok := pa.slotOf[k]; ok {
		return sl, pa.node[sl]
	}
	nd := r.node(parent, region)
	sl := int32(len(pa.node))
	pa.slotOf[k] = sl
	pa.node = append(pa.node, nd)
	pa.visits, pa.incl, pa.excl = append(pa.visits, 0), append(pa.incl, 0), append(pa.excl, 0)
	return sl, nd
}

// treeKey identifies a call-tree node: its parent and region.
type treeKey struct {
	parent int
	region int32
}

// runAcc is the running profile of one run.
type runAcc struct {
	run    int32
	procs  map[int32]*procAcc
	cache  trace.ProcCache[procAcc]
	nodes  []treeKey // node id → (parent, region)
	nodeOf map[treeKey]int
	// outer tells, by node, that no ancestor of the node is of its
	// region: its inclusive time is its region's (a recursive call's is
	// in its outermost caller's already).
	outer    []bool
	msgs     Messages
	bySize   [65]SizeBucket
	byRegion map[int32]*RegionMessages
	byPair   map[[2]int32]*PairMessages
	problems Problems
}

// Accumulator is the profile's engine.Accumulator.
type Accumulator struct {
	t     *engine.Trace
	p     *Params
	of    string
	names map[int32]string
	runs  engine.PerRun[*runAcc]
	res   *Result
}

// New returns an accumulator of the profile of the trace t.
func New(t *engine.Trace, p *Params) (*Accumulator, error) {
	switch p.Sort {
	case SortExclusive, SortInclusive, SortVisits, SortName:
	default:
		return nil, fmt.Errorf("sort %q: want exclusive, inclusive, visits or name", p.Sort)
	}
	if p.Top < 0 || p.MaxNodes < 0 {
		return nil, fmt.Errorf("top %d, max-nodes %d: want 0 or more", p.Top, p.MaxNodes)
	}
	of, err := engine.ResolveOf(t, p.Of)
	if err != nil {
		return nil, err
	}
	a := &Accumulator{t: t, p: p, of: of, names: map[int32]string{}}
	a.runs.New = func(run int32) (*runAcc, error) { return newRun(run, t.Procs(run)) }
	if of == "regions" {
		for _, r := range t.Header.Regions {
			a.names[r.ID] = r.Name()
		}
	} else {
		for _, s := range t.Header.States {
			n := s.Description
			if n == "" {
				n = s.Name
			}
			a.names[s.ID] = n
		}
	}
	return a, nil
}

// name returns the label of region (or state) id.
func (a *Accumulator) name(id int32) string {
	if id == NoRegion {
		return "(none)"
	}
	if n, ok := a.names[id]; ok && n != "" {
		return n
	}
	if a.of == "states" {
		return fmt.Sprintf("state %d", id)
	}
	return fmt.Sprintf("region %d", id)
}

// newRun makes the state of a run of procs processes on its first record.
func newRun(run int32, procs int) (*runAcc, error) {
	return &runAcc{run: run, procs: map[int32]*procAcc{}, cache: trace.NewProcCache[procAcc](procs), nodeOf: map[treeKey]int{},
		byRegion: map[int32]*RegionMessages{}, byPair: map[[2]int32]*PairMessages{}}, nil
}

func (a *Accumulator) runOf(run int32) *runAcc {
	r, _ := a.runs.Of(run) // newRun does not fail
	return r
}

func (r *runAcc) proc(p int32) *procAcc {
	if pa := r.cache.Get(p); pa != nil {
		return pa
	}
	pa := r.procs[p]
	if pa == nil {
		pa = &procAcc{slotOf: map[treeKey]int32{}}
		r.procs[p] = pa
	}
	r.cache.Put(p, pa)
	return pa
}

// node returns the call-tree node of region under parent (−1: a root).
func (r *runAcc) node(parent int, region int32) int {
	k := treeKey{parent, region}
	if id, ok := r.nodeOf[k]; ok {
		return id
	}
	id := len(r.nodes)
	r.nodes = append(r.nodes, k)
	r.nodeOf[k] = id
	// The walk up stops at the first ancestor of the region, so it is no
	// longer than the distinct regions above the node.
	outer := true
	for p := parent; p >= 0 && outer; p = r.nodes[p].parent {
		outer = r.nodes[p].region != region
	}
	r.outer = append(r.outer, outer)
	return id
}

// advance charges the time from pa.at to t to the innermost open region.
func (pa *procAcc) advance(t int64) {
	if n := len(pa.stack); n > 0 && t > pa.at {
		pa.excl[pa.stack[n-1].slot] += t - pa.at
	}
	if t > pa.at {
		pa.at = t
	}
}

func (r *runAcc) enter(pa *procAcc, region int32, t int64) {
	pa.advance(t)
	parent := -1
	if n := len(pa.stack); n > 0 {
		parent = pa.stack[n-1].node
	}
	sl, nd := pa.slot(r, parent, region)
	pa.stack = append(pa.stack, frame{region: region, node: nd, slot: sl, entry: t})
	pa.visits[sl]++
}

// pop closes the innermost frame at t.
func (pa *procAcc) pop(t int64) {
	f := pa.stack[len(pa.stack)-1]
	pa.stack = pa.stack[:len(pa.stack)-1]
	pa.incl[f.slot] += max(t-f.entry, 0)
}

func (r *runAcc) exit(pa *procAcc, region int32, t int64) {
	i := len(pa.stack) - 1
	for i >= 0 && pa.stack[i].region != region {
		i--
	}
	if i < 0 {
		r.problems.UnmatchedExits++
		return
	}
	pa.advance(t)
	if i != len(pa.stack)-1 {
		r.problems.MismatchedExits++
	}
	for len(pa.stack) > i {
		pa.pop(t)
	}
}

// state closes the process's current state and opens state id at t.
func (r *runAcc) state(pa *procAcc, id int32, t int64) {
	pa.advance(t)
	for len(pa.stack) > 0 {
		pa.pop(t)
	}
	r.enter(pa, id, t)
}

// Add implements engine.Accumulator.
func (a *Accumulator) Add(batch []trace.Record) error {
	if a.res != nil {
		return fmt.Errorf("profile: Add after Result")
	}
	for i := range batch {
		rec := &batch[i]
		r := a.runOf(rec.Run)
		pa := r.proc(rec.Proc)
		switch rec.Kind {
		case trace.KindEnter, trace.KindExit:
			if a.of != "regions" {
				break
			}
			if !pa.seen {
				pa.seen, pa.first, pa.at = true, rec.T, rec.T
			}
			if rec.Kind == trace.KindEnter {
				r.enter(pa, rec.ID, rec.T)
			} else {
				r.exit(pa, rec.ID, rec.T)
			}
		case trace.KindState:
			if a.of != "states" {
				break
			}
			if !pa.seen {
				pa.seen, pa.first, pa.at = true, rec.T, rec.T
			}
			r.state(pa, rec.ID, rec.T)
		case trace.KindSend:
			region := NoRegion
			if n := len(pa.stack); n > 0 {
				region = pa.stack[n-1].region
			}
			r.message(rec, region)
		}
		pa.last = max(pa.last, rec.EndTime())
	}
	return nil
}

// message counts a send.
func (r *runAcc) message(rec *trace.Record, region int32) {
	b := max(rec.Value, 0)
	r.msgs.Count++
	r.msgs.Bytes += b
	k := 0
	if b > 0 {
		k = bits.Len64(uint64(b))
	}
	r.bySize[k].Count++
	r.bySize[k].Bytes += b
	rm := r.byRegion[region]
	if rm == nil {
		rm = &RegionMessages{Region: region}
		r.byRegion[region] = rm
	}
	rm.Count++
	rm.Bytes += b
	pk := [2]int32{rec.Proc, rec.Peer}
	pm := r.byPair[pk]
	if pm == nil {
		pm = &PairMessages{Src: rec.Proc, Dst: rec.Peer}
		r.byPair[pk] = pm
	}
	pm.Count++
	pm.Bytes += b
}

// Merge implements engine.Accumulator: other must hold other runs.
func (a *Accumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*Accumulator)
	if !ok {
		return fmt.Errorf("profile: merging a %T", o)
	}
	return a.runs.MergeWhole(&b.runs, "profile")
}

// Result implements engine.Accumulator.
func (a *Accumulator) Result() (any, error) {
	if a.res == nil {
		a.res = &Result{Of: a.of, Runs: engine.FinishRuns(&a.runs, a.finish)}
	}
	return a.res, nil
}

// finish closes every process's open regions and builds the run's profile.
func (a *Accumulator) finish(r *runAcc) RunProfile {
	rp := RunProfile{Run: r.run, Flat: []Entry{}, Tree: []Node{}}
	var procs []int32
	for p, pa := range r.procs {
		if !pa.seen {
			continue
		}
		procs = append(procs, p)
		end := max(pa.last, pa.at)
		pa.advance(end)
		if a.of == "regions" {
			r.problems.Unclosed += int64(len(pa.stack))
		}
		for len(pa.stack) > 0 {
			pa.pop(end)
		}
		rp.TotalNS += end - pa.first
	}
	slices.Sort(procs)
	rp.Procs = len(procs)

	// Flat profile: each process's figures by region, from its nodes.
	type figures struct{ visits, incl, excl int64 }
	byRegion := make([]map[int32]figures, len(procs))
	regions := map[int32]bool{}
	for i, p := range procs {
		pa := r.procs[p]
		m := map[int32]figures{}
		for sl, nd := range pa.node {
			id := r.nodes[nd].region
			f := m[id]
			f.visits += pa.visits[sl]
			f.excl += pa.excl[sl]
			if r.outer[nd] {
				f.incl += pa.incl[sl]
			}
			m[id] = f
			regions[id] = true
		}
		byRegion[i] = m
	}
	for id := range regions {
		e := Entry{Region: id, Name: a.name(id)}
		var incl, excl []int64
		for i, p := range procs {
			f := byRegion[i][id]
			v, in, ex := f.visits, f.incl, f.excl
			if v > 0 {
				e.Procs++
			}
			e.Visits += v
			e.InclusiveNS += in
			e.ExclusiveNS += ex
			incl, excl = append(incl, in), append(excl, ex)
			if a.p.PerProcess {
				e.ByProcess = append(e.ByProcess, ProcEntry{Proc: p, Visits: v, InclusiveNS: in, ExclusiveNS: ex})
			}
		}
		e.Inclusive, e.Exclusive = spread(procs, incl), spread(procs, excl)
		if rp.TotalNS > 0 {
			e.ExclusiveShare = float64(e.ExclusiveNS) / float64(rp.TotalNS)
		}
		rp.Flat = append(rp.Flat, e)
	}
	rp.OutsideNS = rp.TotalNS
	for _, e := range rp.Flat {
		rp.OutsideNS -= e.ExclusiveNS
	}
	slices.SortFunc(rp.Flat, a.order)
	if a.p.Top > 0 && len(rp.Flat) > a.p.Top {
		rp.FlatOmitted = len(rp.Flat) - a.p.Top
		rp.Flat = rp.Flat[:a.p.Top]
	}

	rp.Tree, rp.TreeOmitted = a.tree(r, procs)
	rp.Messages = a.messages(r)
	rp.Problems = r.problems
	return rp
}

// order is the flat profile's order: Params.Sort, then the region id.
func (a *Accumulator) order(x, y Entry) int {
	var c int
	switch a.p.Sort {
	case SortExclusive:
		c = cmp.Compare(y.ExclusiveNS, x.ExclusiveNS)
	case SortInclusive:
		c = cmp.Compare(y.InclusiveNS, x.InclusiveNS)
	case SortVisits:
		c = cmp.Compare(y.Visits, x.Visits)
	case SortName:
		c = cmp.Compare(x.Name, y.Name)
	}
	if c != 0 {
		return c
	}
	return cmp.Compare(x.Region, y.Region)
}

// spread returns the minimum, mean and maximum of v (one value per
// process of procs).
func spread(procs []int32, v []int64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := Spread{MinNS: math.MaxInt64, MaxNS: math.MinInt64}
	var sum float64
	for i, x := range v {
		sum += float64(x)
		if x < s.MinNS {
			s.MinNS, s.MinProc = x, procs[i]
		}
		if x > s.MaxNS {
			s.MaxNS, s.MaxProc = x, procs[i]
		}
	}
	s.MeanNS = sum / float64(len(v))
	return s
}

// tree sums the call-tree nodes over the processes, keeps the MaxNodes
// of the largest inclusive time (with their ancestors) and numbers them
// parents first.
func (a *Accumulator) tree(r *runAcc, procs []int32) ([]Node, int) {
	n := len(r.nodes)
	visits, incl, excl := make([]int64, n), make([]int64, n), make([]int64, n)
	procCount := make([]int, n)
	for _, p := range procs {
		pa := r.procs[p]
		for sl, id := range pa.node {
			visits[id] += pa.visits[sl]
			incl[id] += pa.incl[sl]
			excl[id] += pa.excl[sl]
			procCount[id]++
		}
	}
	depth := make([]int, n)
	for id := range n { // a parent is made before its children
		if p := r.nodes[id].parent; p >= 0 {
			depth[id] = depth[p] + 1
		}
	}
	// A parent's inclusive time is at least its child's, so in the order
	// of inclusive time, shallower first on ties, every node comes after
	// its parent: the first MaxNodes form a tree.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Or(cmp.Compare(incl[y], incl[x]), cmp.Compare(depth[x], depth[y])) })
	if a.p.MaxNodes > 0 && len(order) > a.p.MaxNodes {
		order = order[:a.p.MaxNodes]
	}
	keep := make([]bool, n)
	for _, id := range order {
		keep[id] = true
	}
	children := make([][]int, n+1) // index n: the roots
	for id := 0; id < n; id++ {
		if !keep[id] {
			continue
		}
		p := r.nodes[id].parent
		if p < 0 {
			p = n
		}
		children[p] = append(children[p], id)
	}
	for _, c := range children {
		slices.SortStableFunc(c, func(x, y int) int { return cmp.Compare(incl[y], incl[x]) })
	}
	out := []Node{}
	var walk func(parent, newParent, depth int)
	walk = func(parent, newParent, depth int) {
		for _, id := range children[parent] {
			k := r.nodes[id]
			me := len(out)
			out = append(out, Node{ID: me, Parent: newParent, Depth: depth, Region: k.region, Name: a.name(k.region),
				Visits: visits[id], Procs: procCount[id], InclusiveNS: incl[id], ExclusiveNS: excl[id]})
			walk(id, me, depth+1)
		}
	}
	walk(n, -1, 0)
	return out, n - len(out)
}

// messages builds the message statistics of a run.
func (a *Accumulator) messages(r *runAcc) Messages {
	m := Messages{Count: r.msgs.Count, Bytes: r.msgs.Bytes, BySize: []SizeBucket{}, ByRegion: []RegionMessages{}, ByPair: []PairMessages{}}
	for k, b := range r.bySize {
		if b.Count == 0 {
			continue
		}
		b.MinBytes, b.MaxBytes = 0, 1
		if k > 0 {
			b.MinBytes = int64(1) << (k - 1)
			b.MaxBytes = math.MaxInt64
			if k < 63 {
				b.MaxBytes = int64(1) << k
			}
		}
		m.BySize = append(m.BySize, b)
	}
	for _, rm := range r.byRegion {
		x := *rm
		x.Name = a.name(x.Region)
		m.ByRegion = append(m.ByRegion, x)
	}
	slices.SortFunc(m.ByRegion, func(x, y RegionMessages) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(y.Count, x.Count), cmp.Compare(x.Region, y.Region))
	})
	for _, pm := range r.byPair {
		m.ByPair = append(m.ByPair, *pm)
	}
	slices.SortFunc(m.ByPair, func(x, y PairMessages) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(y.Count, x.Count), cmp.Compare(x.Src, y.Src), cmp.Compare(x.Dst, y.Dst))
	})
	if a.p.Top > 0 && len(m.ByPair) > a.p.Top {
		m.PairsOmitted = len(m.ByPair) - a.p.Top
		m.ByPair = m.ByPair[:a.p.Top]
	}
	return m
}
