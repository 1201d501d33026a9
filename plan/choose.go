package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// MarshalJSON writes the terms with null for a link that does not limit
// (+Inf, which JSON cannot hold).
func (b Bounds) MarshalJSON() ([]byte, error) {
	f := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Compute *float64 `json:"cperf_avail"`
		LAN     *float64 `json:"lan"`
		InetIn  *float64 `json:"inet_in"`
		InetOut *float64 `json:"inet_out"`
	}{f(b.Compute), f(b.LAN), f(b.InetIn), f(b.InetOut)})
}

// Plan is the result of Choose: the system with every node in use and
// with the chosen nodes.
type Plan struct {
	// Threshold is the efficiency threshold the choice meets per cluster.
	Threshold float64 `json:"threshold"`
	// Oper is Task.Oper, to turn tasks per second into operations per
	// second (0: unknown).
	Oper float64 `json:"oper,omitempty"`
	// All uses every node.
	All Evaluation `json:"all"`
	// Chosen uses the nodes Choose picked.
	Chosen Evaluation `json:"chosen"`
	// Use[c][i] says whether node i of cluster c is chosen.
	Use [][]bool `json:"use"`
	// Exact is false when some cluster was too large to search every
	// combination of node speeds; its choice is then the best found after
	// SearchLimit steps, never worse than taking the fastest nodes first.
	Exact bool `json:"exact"`
}

// SearchLimit bounds the combinations Choose examines per cluster.
const SearchLimit = 1 << 20

// Choose picks, in every cluster, the nodes to use so that the cluster's
// efficiency Perf_Ste/CPerf_Avail is at least threshold (0 ≤ threshold ≤
// 1): it maximises the cluster's Perf_Ste under that constraint, then the
// efficiency, then uses the fewest nodes. With B the cluster's network
// bound (the smallest network term of 4.8), a set of nodes meets the
// threshold exactly when its CPerf_Avail ≤ B/threshold, so the choice is a
// subset sum: the largest CPerf_Avail not above B/threshold, any value in
// [B, B/threshold] giving Perf_Ste = B. Nodes with equal task times are
// interchangeable, so the search runs over how many of each speed to take
// (fastest first: the first combination it reaches is the greedy one).
// A cluster where no node fits is slashed (no node used). A threshold of 0
// uses every node.
func Choose(s System, threshold float64) (Plan, error) {
	if !(threshold >= 0 && threshold <= 1) {
		return Plan{}, fmt.Errorf("efficiency threshold %v is not in [0, 1]", threshold)
	}
	all, err := Evaluate(s, nil)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Threshold: threshold, Oper: s.Task.Oper, All: all, Exact: true}
	for _, c := range s.Clusters {
		u, exact := chooseNodes(c.Nodes, NetworkBounds(c, s.Task).Network(), threshold)
		p.Use = append(p.Use, u)
		p.Exact = p.Exact && exact
	}
	p.Chosen, err = Evaluate(s, p.Use)
	return p, err
}

// speedGroup is the nodes of one task time, in their input order.
type speedGroup struct {
	perf  float64
	nodes []int
}

// choice is a candidate: how many nodes of each group, and its totals.
type choice struct {
	take  []int
	sum   float64 // CPerf_Avail
	ste   float64 // min(sum, bound)
	count int
}

// closeTo compares sums of positive floats with a relative tolerance, so
// that a sum equal to the bound in exact arithmetic counts as equal.
func closeTo(a, b float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// better orders candidates: higher Perf_Ste, then smaller CPerf_Avail
// (higher efficiency), then fewer nodes.
func (c choice) better(d choice) bool {
	if !closeTo(c.ste, d.ste) {
		return c.ste > d.ste
	}
	if !closeTo(c.sum, d.sum) {
		return c.sum < d.sum
	}
	return c.count < d.count
}

// chooseNodes returns which nodes to use and whether the search was
// exhaustive.
func chooseNodes(nodes []Node, bound, threshold float64) ([]bool, bool) {
	use := make([]bool, len(nodes))
	if threshold == 0 || math.IsInf(bound, 1) {
		for i := range use {
			use[i] = true
		}
		return use, true
	}
	limit := bound / threshold
	var groups []speedGroup
	byTime := map[float64]int{}
	for i, n := range nodes {
		g, ok := byTime[n.TaskTime]
		if !ok {
			g = len(groups)
			byTime[n.TaskTime] = g
			groups = append(groups, speedGroup{perf: n.PerfAvail()})
		}
		groups[g].nodes = append(groups[g].nodes, i)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].perf > groups[b].perf })
	// rest[g] is the CPerf_Avail of every node in groups g.. (for pruning).
	rest := make([]float64, len(groups)+1)
	for g := len(groups) - 1; g >= 0; g-- {
		rest[g] = rest[g+1] + groups[g].perf*float64(len(groups[g].nodes))
	}
	best := choice{take: make([]int, len(groups))}
	cur := make([]int, len(groups))
	steps, exact := 0, true
	var search func(g int, sum float64, count int)
	search = func(g int, sum float64, count int) {
		if steps >= SearchLimit {
			exact = false
			return
		}
		steps++
		// Past the bound, more nodes only lower the efficiency: the
		// remaining groups take none.
		if g == len(groups) || sum >= bound || closeTo(sum, bound) {
			for h := g; h < len(groups); h++ {
				cur[h] = 0
			}
			c := choice{take: cur, sum: sum, ste: math.Min(sum, bound), count: count}
			if c.better(best) {
				best = choice{take: append([]int(nil), cur...), sum: c.sum, ste: c.ste, count: count}
			}
			return
		}
		// Even taking every remaining node cannot beat the best Perf_Ste.
		if up := math.Min(sum+rest[g], bound); up < best.ste && !closeTo(up, best.ste) {
			return
		}
		// The bound is reached already, with a smaller CPerf_Avail than
		// any completion of this branch can have.
		if closeTo(best.ste, bound) && sum >= best.sum && !closeTo(sum, best.sum) {
			return
		}
		// The best is exactly at the bound: only fewer nodes can beat it,
		// and reaching the bound takes at least (bound-sum)/perf more nodes
		// of the fastest speed left.
		if closeTo(best.ste, bound) && closeTo(best.sum, bound) &&
			count+int(math.Ceil((bound-sum)/groups[g].perf*(1-1e-9))) >= best.count {
			return
		}
		gr := groups[g]
		for k := len(gr.nodes); k >= 0; k-- {
			s := sum + float64(k)*gr.perf
			if s > limit && !closeTo(s, limit) {
				continue
			}
			cur[g] = k
			search(g+1, s, count+k)
		}
		cur[g] = 0
	}
	search(0, 0, 0)
	for g, k := range best.take {
		for _, i := range groups[g].nodes[:k] {
			use[i] = true
		}
	}
	return use, exact
}
