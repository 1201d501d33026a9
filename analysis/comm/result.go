package comm

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// Result is the code-structure tree with the communication of every
// structure.
type Result struct {
	Run int32 `json:"run"`
	// Procs is n, the size of the matrices.
	Procs int `json:"procs"`
	// Decomposition is the algorithm collectives were decomposed with
	// ("" when collectives were left out).
	Decomposition string `json:"decomposition,omitempty"`
	// Nodes is the tree in creation order: Nodes[0] is the root (the whole
	// program) and every node comes after its parent.
	Nodes []Node `json:"nodes"`
	// Matched counts the point-to-point messages whose two sides matched.
	Matched  int64    `json:"matched"`
	Problems Problems `json:"problems"`
}

// Node is one code structure: a region as entered inside its parent. The
// same region entered from two different parents is two nodes.
type Node struct {
	ID     int    `json:"id"`
	Parent int    `json:"parent"`
	Region int32  `json:"region"`
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	// Depth is the number of structures from the root down to this one
	// (the root's is 0). A node's path is not stored: it is its parent's
	// path and its name (Result.Path), so that a tree of any depth takes
	// memory proportional to its nodes.
	Depth    int   `json:"depth"`
	Children []int `json:"children,omitempty"`
	// Entries counts the entries into this structure over all processes.
	Entries int64 `json:"entries"`
	// Own is the communication in this structure alone (not in nested
	// ones); Aggregate includes every nested structure.
	Own       Stats `json:"own"`
	Aggregate Stats `json:"aggregate"`
	// WorkingSets are the pairs used per entry (aggregated over nested
	// structures), when Options.WorkingSets was set.
	WorkingSets *WorkingSets `json:"working_sets,omitempty"`

	own, agg *Matrix
}

// Stats summarises one matrix.
type Stats struct {
	Bytes    int64 `json:"bytes"`
	Messages int64 `json:"messages"`
	// Pairs is the number of (src, dst) pairs used.
	Pairs int `json:"pairs"`
	// Degree is the largest communication degree of a process (distinct
	// partners, sent to or received from); Degrees gives it per process.
	Degree     int     `json:"degree"`
	MeanDegree float64 `json:"mean_degree"`
	Degrees    []int   `json:"degrees"`
}

// WorkingSets describes the sets of pairs used per window of a
// structure's execution. Window k is the k-th entry of the structure by
// every process (the k-th iteration of the enclosing loop's body, for an
// SPMD code); its set is the union of the pairs each process used during
// its k-th entry, nested structures included.
type WorkingSets struct {
	Windows   int     `json:"windows"`
	MinPairs  int     `json:"min_pairs"`
	MaxPairs  int     `json:"max_pairs"`
	MeanPairs float64 `json:"mean_pairs"`
	// Distinct is the number of different sets; Changes the number of
	// windows whose set differs from the previous window's.
	Distinct int `json:"distinct"`
	Changes  int `json:"changes"`
	// Sets are the distinct sets, most frequent first (at most 8).
	Sets []PairSet `json:"sets"`
}

// PairSet is one working set and the windows that used exactly it.
type PairSet struct {
	Windows int `json:"windows"`
	// First is the first window that used it.
	First int        `json:"first"`
	Pairs [][2]int32 `json:"pairs"`
}

// maxSets bounds WorkingSets.Sets.
const maxSets = 8

// OwnMatrix returns the matrix of the structure alone. Matrices of a
// Result are shared between structures without traffic: do not modify them.
func (n *Node) OwnMatrix() *Matrix { return n.own }

// AggregateMatrix returns the matrix of the structure and everything nested in it.
func (n *Node) AggregateMatrix() *Matrix { return n.agg }

// Matrix returns the node's aggregate matrix, or its own when aggregate is false.
func (n *Node) Matrix(aggregate bool) *Matrix {
	if aggregate {
		return n.agg
	}
	return n.own
}

// Result computes the tree, matrices, degrees and working sets of what the
// accumulator has seen so far. Regions still open count as closed at the
// end (Problems.Unclosed). It does not change the accumulator.
func (a *Accumulator) Result() *Result {
	res := &Result{Run: a.opts.Run, Procs: a.n, Matched: a.matched, Problems: a.problems}
	if !a.opts.NoCollectives {
		res.Decomposition = a.opts.Decompose.String()
	}
	if !a.opts.NoMatch {
		sends, recvs := a.match.Unmatched()
		res.Problems.UnmatchedSends, res.Problems.UnmatchedRecvs = int64(len(sends)), int64(len(recvs))
		all := append(sends, recvs...)
		slices.SortStableFunc(all, trace.Compare)
		for _, r := range all[:min(len(all), maxExamples)] {
			res.Problems.Unmatched = append(res.Problems.Unmatched, r.String())
		}
	}
	// Windows, with the open frames closed on copies.
	var windows [][][]uint64
	if a.opts.WorkingSets {
		windows = make([][][]uint64, len(a.nodes))
		for id, nd := range a.nodes {
			windows[id] = make([][]uint64, len(nd.windows))
			for k, w := range nd.windows {
				windows[id][k] = slices.Clone(w)
			}
		}
	}
	for p, st := range a.stacks {
		res.Problems.Unclosed += int64(len(st) - 1)
		if !a.opts.WorkingSets {
			continue
		}
		var carry []int32
		for i := len(st) - 1; i >= 0; i-- {
			f := st[i]
			set := map[int32]bool{}
			for _, d := range f.dsts {
				set[d] = true
			}
			for _, d := range carry {
				set[d] = true
			}
			carry = carry[:0:0]
			for d := range set {
				carry = append(carry, d)
				windows[f.node][f.k] = append(windows[f.node][f.k], uint64(p)<<32|uint64(d))
			}
		}
	}
	// Structures without traffic in their subtree share one empty matrix,
	// so a deep call tree over many processes stays small.
	traffic := make([]bool, len(a.nodes))
	for id := len(a.nodes) - 1; id >= 0; id-- {
		nd := a.nodes[id]
		traffic[id] = traffic[id] || nd.bytes != nil
		if id > 0 && traffic[id] {
			traffic[nd.parent] = true
		}
	}
	empty := NewMatrix(a.n)
	emptyStats := stats(empty)
	res.Nodes = make([]Node, len(a.nodes))
	for id, nd := range a.nodes {
		n := &res.Nodes[id]
		n.ID, n.Parent, n.Region, n.Depth = id, nd.parent, nd.region, nd.depth
		n.own, n.agg = empty, empty
		if nd.bytes != nil {
			n.own = &Matrix{N: a.n, Bytes: slices.Clone(nd.bytes), Count: slices.Clone(nd.count)}
		}
		for _, e := range nd.entries {
			n.Entries += int64(e)
		}
		if id == 0 {
			n.Name, n.Kind, n.Entries = RootName, "program", 1
			continue
		}
		if def := a.idx.Region(nd.region); def != nil {
			n.Name, n.Kind = def.Label, def.Kind.String()
		} else {
			n.Name, n.Kind = fmt.Sprintf("region %d", nd.region), "region"
		}
		res.Nodes[nd.parent].Children = append(res.Nodes[nd.parent].Children, id)
	}
	// Aggregates from the leaves up (children come after their parent). A
	// structure without traffic of its own and with one child with traffic
	// shares that child's aggregate matrix and statistics: a deep chain of
	// calls above one that communicates holds one matrix, not one per call.
	for id := len(res.Nodes) - 1; id >= 0; id-- {
		n := &res.Nodes[id]
		n.Own, n.Aggregate = emptyStats, emptyStats
		if n.own != empty {
			n.Own = stats(n.own)
		}
		if a.opts.WorkingSets {
			n.WorkingSets = workingSets(windows[id])
		}
		if !traffic[id] {
			continue
		}
		only, busy := -1, 0
		for _, c := range n.Children {
			if traffic[c] {
				only = c
				busy++
			}
		}
		if n.own == empty && busy == 1 {
			n.agg, n.Aggregate = res.Nodes[only].agg, res.Nodes[only].Aggregate
			continue
		}
		n.agg = NewMatrix(a.n)
		n.agg.AddMatrix(n.own)
		for _, c := range n.Children {
			if traffic[c] {
				n.agg.AddMatrix(res.Nodes[c].agg)
			}
		}
		n.Aggregate = stats(n.agg)
	}
	return res
}

func stats(m *Matrix) Stats {
	s := Stats{Degrees: m.Degrees(), Pairs: m.Pairs()}
	s.Bytes, s.Messages = m.Totals()
	sum := 0
	for _, d := range s.Degrees {
		s.Degree = max(s.Degree, d)
		sum += d
	}
	if len(s.Degrees) > 0 {
		s.MeanDegree = float64(sum) / float64(len(s.Degrees))
	}
	return s
}

func workingSets(windows [][]uint64) *WorkingSets {
	ws := &WorkingSets{Windows: len(windows)}
	if len(windows) == 0 {
		return ws
	}
	type group struct {
		n, first int
		pairs    []uint64
	}
	groups := map[string]*group{}
	var order []*group
	prev := ""
	ws.MinPairs = -1
	total := 0
	buf := make([]byte, 0, 64)
	for k, w := range windows {
		slices.Sort(w)
		w = slices.Compact(w)
		if ws.MinPairs < 0 || len(w) < ws.MinPairs {
			ws.MinPairs = len(w)
		}
		ws.MaxPairs = max(ws.MaxPairs, len(w))
		total += len(w)
		buf = buf[:0]
		for _, x := range w {
			buf = binary.LittleEndian.AppendUint64(buf, x)
		}
		key := string(buf)
		if k > 0 && key != prev {
			ws.Changes++
		}
		prev = key
		g := groups[key]
		if g == nil {
			g = &group{first: k, pairs: w}
			groups[key] = g
			order = append(order, g)
		}
		g.n++
	}
	ws.MeanPairs = float64(total) / float64(len(windows))
	ws.Distinct = len(order)
	slices.SortStableFunc(order, func(x, y *group) int { return y.n - x.n })
	for _, g := range order[:min(len(order), maxSets)] {
		ps := PairSet{Windows: g.n, First: g.first, Pairs: make([][2]int32, len(g.pairs))}
		for i, x := range g.pairs {
			ps.Pairs[i] = [2]int32{int32(x >> 32), int32(uint32(x))}
		}
		ws.Sets = append(ws.Sets, ps)
	}
	return ws
}

// Path returns the names of the structures from the root's child down to
// node id, joined by "/" ("" for the root), built by following the parents.
func (r *Result) Path(id int) string {
	if id <= 0 || id >= len(r.Nodes) {
		return ""
	}
	var names []string
	for ; id > 0; id = r.Nodes[id].Parent {
		names = append(names, r.Nodes[id].Name)
	}
	slices.Reverse(names)
	return strings.Join(names, "/")
}

// hasPath reports whether Path(id) == path, without building the path:
// the names are matched from the node up, so a name that is no suffix of
// path costs one comparison.
func (r *Result) hasPath(id int, path string) bool {
	for id > 0 {
		n := &r.Nodes[id]
		if n.Parent == 0 {
			return path == n.Name
		}
		rest, ok := strings.CutSuffix(path, n.Name)
		if !ok || !strings.HasSuffix(rest, "/") {
			return false
		}
		path, id = rest[:len(rest)-1], n.Parent
	}
	return false
}

// Find returns the nodes named name: by region label, by path
// ("LOOP_100/IF_101"), by node id ("#3"), or "program" for the root.
func (r *Result) Find(name string) []int {
	if s, ok := strings.CutPrefix(name, "#"); ok {
		if id, err := strconv.Atoi(s); err == nil && id >= 0 && id < len(r.Nodes) {
			return []int{id}
		}
		return nil
	}
	var out []int
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Name == name || (i > 0 && r.hasPath(i, name)) {
			out = append(out, i)
		}
	}
	return out
}

// Select returns the matrix of a selection of structures. With aggregate,
// each selected structure counts with everything nested in it, and a
// structure nested in another selected one is counted once; without, each
// selected structure counts alone.
func (r *Result) Select(ids []int, aggregate bool) (*Matrix, error) {
	in := make([]bool, len(r.Nodes))
	for _, id := range ids {
		if id < 0 || id >= len(r.Nodes) {
			return nil, fmt.Errorf("comm: no structure #%d (the tree has %d)", id, len(r.Nodes))
		}
		in[id] = true
	}
	if aggregate {
		for id := 1; id < len(r.Nodes); id++ { // parents come first
			if in[r.Nodes[id].Parent] {
				in[id] = true
			}
		}
	}
	m := NewMatrix(r.Procs)
	for id, ok := range in {
		if ok {
			m.AddMatrix(r.Nodes[id].own)
		}
	}
	return m, nil
}

// Ranking orders the structures (the root excluded) by volume (bytes,
// then messages) and by degree (largest degree, then mean degree), largest
// first, ties by id.
type Ranking struct {
	ByVolume []int `json:"by_volume"`
	ByDegree []int `json:"by_degree"`
}

// Rank ranks the structures by their aggregate or own communication. The
// lists are empty, never nil, when there is no structure but the root (a
// trace with messages and no regions): JSON readers get [] and not null.
func (r *Result) Rank(aggregate bool) Ranking {
	st := func(id int) *Stats {
		if aggregate {
			return &r.Nodes[id].Aggregate
		}
		return &r.Nodes[id].Own
	}
	n := max(len(r.Nodes)-1, 0)
	rk := Ranking{ByVolume: make([]int, 0, n), ByDegree: make([]int, 0, n)}
	for id := 1; id < len(r.Nodes); id++ {
		rk.ByVolume = append(rk.ByVolume, id)
		rk.ByDegree = append(rk.ByDegree, id)
	}
	cmp3 := func(a, b int64) int {
		if a > b {
			return -1
		}
		if a < b {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(rk.ByVolume, func(x, y int) int {
		if c := cmp3(st(x).Bytes, st(y).Bytes); c != 0 {
			return c
		}
		return cmp3(st(x).Messages, st(y).Messages)
	})
	slices.SortStableFunc(rk.ByDegree, func(x, y int) int {
		if c := cmp3(int64(st(x).Degree), int64(st(y).Degree)); c != 0 {
			return c
		}
		switch {
		case st(x).MeanDegree > st(y).MeanDegree:
			return -1
		case st(x).MeanDegree < st(y).MeanDegree:
			return 1
		}
		return 0
	})
	return rk
}

// Canonical returns the result with its nodes numbered in canonical order:
// the root first, then by path (Path), ties by the chain of region ids
// from the root (the ids in decimal joined by "/"). Creation order depends
// on which process entered a structure first, so accumulators of different
// processes merged in any order (Accumulator.Merge) and one pass over the
// whole trace number the nodes differently; in canonical order their
// results are equal. The matrices are shared with r.
//
// The order is computed without building a path or chain per node (that
// would cost memory in the square of the depth): in memory proportional
// to the nodes (canonicalOrder).
func (r *Result) Canonical() *Result {
	n := len(r.Nodes)
	order := r.canonicalOrder()
	newID := make([]int, n)
	for to, from := range order {
		newID[from] = to
	}
	out := &Result{Run: r.Run, Procs: r.Procs, Decomposition: r.Decomposition, Matched: r.Matched, Problems: r.Problems, Nodes: make([]Node, n)}
	for to, from := range order {
		nd := r.Nodes[from]
		nd.ID = to
		if nd.Parent >= 0 {
			nd.Parent = newID[nd.Parent]
		}
		var kids []int
		for _, c := range nd.Children {
			kids = append(kids, newID[c])
		}
		slices.Sort(kids)
		nd.Children = kids
		out.Nodes[to] = nd
	}
	return out
}

// canonicalOrder returns the node ids in canonical order (Canonical). The
// paths are ranked by a radix tree of them (pathTree), each path entered
// from its parent's, and the chains of region ids by a walk of the tree
// with each node's children in the decimal order of their region ids: a
// chain is its parent's chain and one more id, so chains compare as the
// sequences of ids, each id compared as a decimal string.
func (r *Result) canonicalOrder() []int {
	n := len(r.Nodes)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if n <= 1 {
		return order
	}
	pathRank := r.pathRanks()
	chainRank := make([]int32, n)
	var next int32
	stack := []int{0}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		chainRank[id] = next
		next++
		at := len(stack)
		stack = append(stack, r.Nodes[id].Children...)
		// Pushed last, visited first: the smallest id ends on top.
		slices.SortFunc(stack[at:], func(a, b int) int { return cmpDecimal(r.Nodes[b].Region, r.Nodes[a].Region) })
	}
	slices.SortFunc(order[1:], func(a, b int) int {
		if c := cmp.Compare(pathRank[a], pathRank[b]); c != 0 {
			return c
		}
		return cmp.Compare(chainRank[a], chainRank[b])
	})
	return order
}

// cmpDecimal compares a and b as strconv.Itoa writes them.
func cmpDecimal(a, b int32) int {
	var x, y [12]byte
	return bytes.Compare(strconv.AppendInt(x[:0], int64(a), 10), strconv.AppendInt(y[:0], int64(b), 10))
}

// pathRanks returns, per node, the rank of its path (Path) among the
// paths of every node: equal paths, equal ranks; the root's path, "", is
// the smallest.
func (r *Result) pathRanks() []int32 {
	t := newPathTree(r)
	t.add(-1, 0, 0) // the root of the tree: the empty path
	at := make([]int32, len(r.Nodes))
	for id := 1; id < len(r.Nodes); id++ {
		at[id] = t.insert(at[r.Nodes[id].Parent], id)
	}
	rank := t.ranks()
	for id, x := range at {
		at[id] = rank[x]
	}
	return at
}

// pathTree is a radix tree of the nodes' paths. Each of its vertices ends
// a prefix of a path; the label of the edge into it is a part of one
// node's segment (segment): its bytes lo to hi. A vertex's children are
// listed (kid, then next) in the order of their labels' first bytes,
// which differ, so that a depth-first walk meets the prefixes in
// lexicographic order. A path is its parent's and the node's segment, so
// it is entered from where its parent's ended, in time proportional to
// the segment: the tree has at most two vertices per node, whatever the
// depth.
type pathTree struct {
	r              *Result
	seg, lo, hi    []int32 // the label: segment(seg)[lo:hi]
	kid, nextChild []int32 // first child, next sibling; -1 for none
}

// newPathTree returns an empty tree for the paths of r's nodes, with room
// for as many vertices as the nodes need at most.
func newPathTree(r *Result) *pathTree {
	n := 2 * len(r.Nodes)
	return &pathTree{r: r, seg: make([]int32, 0, n), lo: make([]int32, 0, n), hi: make([]int32, 0, n),
		kid: make([]int32, 0, n), nextChild: make([]int32, 0, n)}
}

// segLen returns the length of the part node id adds to its parent's
// path: its name, after a "/" below the root's children.
func (t *pathTree) segLen(id int32) int32 {
	n := &t.r.Nodes[id]
	if n.Parent > 0 {
		return int32(len(n.Name)) + 1
	}
	return int32(len(n.Name))
}

// segAt returns byte k of node id's segment.
func (t *pathTree) segAt(id, k int32) byte {
	n := &t.r.Nodes[id]
	if n.Parent > 0 {
		if k == 0 {
			return '/'
		}
		k--
	}
	return n.Name[k]
}

// add appends a vertex with no child whose label is segment(seg)[lo:hi].
func (t *pathTree) add(seg, lo, hi int32) int32 {
	t.seg, t.lo, t.hi = append(t.seg, seg), append(t.lo, lo), append(t.hi, hi)
	t.kid, t.nextChild = append(t.kid, -1), append(t.nextChild, -1)
	return int32(len(t.seg) - 1)
}

// insert enters the path of node id, whose parent's path ends at vertex
// from, and returns the vertex where it ends.
func (t *pathTree) insert(from int32, id int) int32 {
	x, k, n := from, int32(0), t.segLen(int32(id))
	for k < n {
		c := t.segAt(int32(id), k)
		prev, y := int32(-1), t.kid[x]
		for y >= 0 && t.segAt(t.seg[y], t.lo[y]) < c {
			prev, y = y, t.nextChild[y]
		}
		if y < 0 || t.segAt(t.seg[y], t.lo[y]) != c {
			v := t.add(int32(id), k, n)
			t.nextChild[v] = y
			t.link(x, prev, v)
			return v
		}
		m := int32(1)
		for t.lo[y]+m < t.hi[y] && k+m < n && t.segAt(t.seg[y], t.lo[y]+m) == t.segAt(int32(id), k+m) {
			m++
		}
		if t.lo[y]+m < t.hi[y] { // split y's label after m bytes
			v := t.add(t.seg[y], t.lo[y], t.lo[y]+m)
			t.kid[v], t.nextChild[v] = y, t.nextChild[y]
			t.nextChild[y] = -1
			t.lo[y] += m
			t.link(x, prev, v)
			y = v
		}
		x, k = y, k+m
	}
	return x
}

// link puts v in x's children after prev (first when prev is -1), in the
// place of what was there (v's nextChild must be set).
func (t *pathTree) link(x, prev, v int32) {
	if prev < 0 {
		t.kid[x] = v
	} else {
		t.nextChild[prev] = v
	}
}

// ranks returns the rank of every vertex in a depth-first walk, children
// in order: the lexicographic order of the prefixes they end.
func (t *pathTree) ranks() []int32 {
	rank := make([]int32, len(t.seg))
	var next int32
	stack := []int32{0}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		rank[x] = next
		next++
		if s := t.nextChild[x]; s >= 0 {
			stack = append(stack, s)
		}
		if c := t.kid[x]; c >= 0 {
			stack = append(stack, c)
		}
	}
	return rank
}
