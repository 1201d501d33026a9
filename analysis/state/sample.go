package state

// Sample returns at most max evenly spaced numbers of n states (every one
// when n ≤ max or max ≤ 0), in increasing order, the first and last
// included: the states whose points the PCA and phase-space results keep
// for drawing, so that runs of millions of states stay drawable.
func Sample(n int64, max int) []int64 {
	if n <= int64(max) || max <= 0 {
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(i)
		}
		return idx
	}
	idx := make([]int64, max)
	if max == 1 {
		return idx
	}
	for i := range idx {
		idx[i] = int64(i) * (n - 1) / int64(max-1)
	}
	return idx
}
