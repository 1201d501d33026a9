package comm

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stringOrder is the canonical order as Canonical defines it, computed
// from the path and chain strings of every node (memory in the square of
// the depth: for small trees only).
func stringOrder(r *Result) []int {
	n := len(r.Nodes)
	chain := make([]string, n)
	paths := make([]string, n)
	for i, nd := range r.Nodes {
		if nd.Parent >= 0 {
			chain[i] = chain[nd.Parent] + "/"
		}
		chain[i] += strconv.Itoa(int(nd.Region))
		paths[i] = r.Path(i)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if a == 0 || b == 0 {
			return a - b
		}
		if c := strings.Compare(paths[a], paths[b]); c != 0 {
			return c
		}
		return strings.Compare(chain[a], chain[b])
	})
	return order
}

// randomTree returns a tree of n nodes in creation order whose names share
// prefixes, hold "/" and bytes that sort before and after it, or are
// empty, and whose region ids sort differently as numbers and as decimal
// strings; the same name under one parent may be two regions.
func randomTree(rng *rand.Rand, n int) *Result {
	names := []string{"", "a", "a", "a.b", "a/b", "a/x", "a b", "ab", "b", "a/", "/a", "LOOP_100", "LOOP_10", "LOOP_100/IF_101", "f", "f (x.py:3)", "é"}
	regions := []int32{1, 2, 9, 10, 11, 100, 12, 3, -5, 0}
	r := &Result{Nodes: []Node{{ID: 0, Parent: -1, Region: -1, Name: RootName}}}
	type key struct {
		parent int
		region int32
	}
	used := map[key]bool{}
	for len(r.Nodes) < n {
		p := rng.IntN(len(r.Nodes))
		if rng.IntN(3) > 0 { // deep chains
			p = len(r.Nodes) - 1 - rng.IntN(min(3, len(r.Nodes)))
		}
		k := rng.IntN(len(regions))
		reg := regions[k]
		if used[key{p, reg}] {
			continue
		}
		used[key{p, reg}] = true
		id := len(r.Nodes)
		r.Nodes = append(r.Nodes, Node{ID: id, Parent: p, Region: reg, Name: names[(k*7+rng.IntN(3))%len(names)], Depth: r.Nodes[p].Depth + 1})
		r.Nodes[p].Children = append(r.Nodes[p].Children, id)
	}
	return r
}

// TestCanonicalOrder checks the order Canonical computes in memory
// proportional to the nodes against the order of the path and chain
// strings it is defined by, on random trees whose names and region ids
// make the two orders differ from any order of the names or ids alone.
func TestCanonicalOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2007))
	for trial := range 500 {
		r := randomTree(rng, 1+rng.IntN(60))
		want := stringOrder(r)
		if got := r.canonicalOrder(); !slices.Equal(got, want) {
			var lines []string
			for _, id := range want {
				lines = append(lines, strconv.Itoa(id)+" "+strconv.Quote(r.Path(id)))
			}
			t.Fatalf("trial %d: order %v, want %v:\n%s", trial, got, want, strings.Join(lines, "\n"))
		}
		c := r.Canonical()
		for to, from := range want {
			n := c.Nodes[to]
			if n.ID != to || n.Name != r.Nodes[from].Name || c.Path(to) != r.Path(from) {
				t.Fatalf("trial %d: node %d is %+v, want node %d of path %q", trial, to, n, from, r.Path(from))
			}
			if to > 0 && (n.Parent >= to || !slices.Contains(c.Nodes[n.Parent].Children, to)) {
				t.Fatalf("trial %d: node %d has parent %d, whose children are %v", trial, to, n.Parent, c.Nodes[n.Parent].Children)
			}
		}
	}
}
