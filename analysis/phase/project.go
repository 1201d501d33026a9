package phase

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/parscope/parscope/format/bbv"
)

// dataset is the matrix k-means works on: n rows of d columns, row-major,
// with one weight per row.
type dataset struct {
	n, d int
	// x holds the rows, n*d values, when they were built at once (nil
	// when they were projected as the input was read).
	x []float64
	// chunks holds the rows, rowsPerChunk to a chunk (the last may be
	// partly used): views of x, or the chunks a projector filled, which
	// are never copied into one array.
	chunks  [][]float64
	w       []float64 // n
	sums    []float64 // each interval's total count
	inDim   int32     // dimension of the input (largest block id)
	project bool

	spreadOnce  sync.Once
	spreadValue float64
}

func (ds *dataset) row(i int) []float64 {
	j := (i & (rowsPerChunk - 1)) * ds.d
	return ds.chunks[i>>rowsShift][j : j+ds.d]
}

// releaseRows drops ds's rows (its other fields stay), so that the
// collector can take them; ds.row must not be called afterwards.
func (ds *dataset) releaseRows() {
	ds.x, ds.chunks = nil, nil
}

// setRows makes x (n*d values) the rows of ds.
func (ds *dataset) setRows(x []float64) {
	ds.x = x
	ds.chunks = ds.chunks[:0]
	for lo := 0; lo < len(x); lo += rowsPerChunk * ds.d {
		ds.chunks = append(ds.chunks, x[lo:min(len(x), lo+rowsPerChunk*ds.d)])
	}
}

// spread returns the weighted mean squared distance of the rows to their
// weighted mean (the distortion of one cluster, per unit of weight),
// computed once.
func (ds *dataset) spread() float64 {
	ds.spreadOnce.Do(func() {
		mean := make([]float64, ds.d)
		total := 0.0
		for i, w := range ds.w {
			for j, v := range ds.row(i) {
				mean[j] += float64(v * w)
			}
			total += w
		}
		for j := range mean {
			mean[j] /= total
		}
		s := 0.0
		for i, w := range ds.w {
			s += float64(w * sqDist(ds.row(i), mean))
		}
		ds.spreadValue = s / total
	})
	return ds.spreadValue
}

// maxDenseElements bounds the matrix built for NoProject.
const maxDenseElements = 1 << 28

// checkFile validates the input for clustering.
func checkFile(f *bbv.File) error {
	if f == nil || len(f.Vectors) == 0 {
		return fmt.Errorf("phase: no intervals to cluster")
	}
	for i, v := range f.Vectors {
		line := 0
		if i < len(f.Lines) {
			line = f.Lines[i]
		}
		if err := checkVector(f.Name, i, line, v, f.Dim); err != nil {
			return err
		}
	}
	return nil
}

// checkVector validates interval i of the input named name (from line
// line, 0 when unknown) whose block ids must lie in 1..dim.
func checkVector(name string, i, line int, v bbv.Vector, dim int32) error {
	where := func() string {
		if line > 0 {
			return fmt.Sprintf("%s:%d: interval %d", name, line, i)
		}
		return fmt.Sprintf("%s: interval %d", name, i)
	}
	if len(v.Blocks) != len(v.Counts) {
		return fmt.Errorf("phase: %s has %d blocks but %d counts", where(), len(v.Blocks), len(v.Counts))
	}
	for j, b := range v.Blocks {
		if b < 1 || b > dim {
			return fmt.Errorf("phase: %s: block id %d outside 1..%d", where(), b, dim)
		}
		c := v.Counts[j]
		if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("phase: %s: block %d has count %v (counts must be finite and ≥ 0)", where(), b, c)
		}
	}
	if s := v.Sum(); !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("phase: %s: total count is %v; a vector must have a positive finite total to be normalised", where(), s)
	}
	return nil
}

// projectionRows generates SimPoint's random projection matrix for block
// ids 1..dim and returns the rows of the ids listed in want (sorted,
// unique), in that order: row r of the matrix is ran2(seed) values
// 15r..15r+14 (for cols = 15), each mapped to [-1, 1) as
// float64(randFloat())*2 - 1. Rows of ids not in want are generated and
// discarded, so memory is proportional to len(want).
func projectionRows(ctx context.Context, seed int64, dim int32, cols int, want []int32) ([]float64, error) {
	rng := newRan2(seed)
	if rng.broken {
		return nil, errBrokenSeed("projection seed", seed)
	}
	out := make([]float64, len(want)*cols)
	next := 0
	for id := int32(1); id <= dim && next < len(want); id++ {
		if id%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if want[next] == id {
			row := out[next*cols : (next+1)*cols]
			for c := range row {
				row[c] = float64(rng.float())*2.0 - 1.0
			}
			next++
			continue
		}
		for c := 0; c < cols; c++ {
			rng.float()
		}
	}
	return out, nil
}

func errBrokenSeed(what string, seed int64) error {
	return fmt.Errorf("phase: %s %d: SimPoint 3.2's generator never initialises itself for seed 1 (undefined behaviour), so it cannot be reproduced; choose another seed", what, seed)
}

// ProjectionMatrix returns SimPoint's random projection matrix for
// dimension dim (block ids 1..dim) and cols projected dimensions,
// row-major: entry [r*cols+c] multiplies block id r+1.
func ProjectionMatrix(seed int64, dim int32, cols int) ([]float64, error) {
	ids := make([]int32, dim)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	return projectionRows(context.Background(), seed, dim, cols, ids)
}

// load normalises and projects the vectors of f (docs/simpoint-3.2.md §2-3)
// and sets the row weights.
func load(ctx context.Context, f *bbv.File, opts *Options) (*dataset, error) {
	if err := checkFile(f); err != nil {
		return nil, err
	}
	if opts.Dim == NoProject {
		return loadDense(f, opts)
	}
	m, err := newMatrix(opts)
	if err != nil {
		return nil, err
	}
	n := len(f.Vectors)
	ds := &dataset{n: n, d: opts.Dim, inDim: f.Dim, project: true, sums: make([]float64, n), w: make([]float64, n)}
	ds.setRows(make([]float64, n*ds.d))
	for i, v := range f.Vectors {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ds.sums[i] = m.project(ds.row(i), v)
	}
	setWeights(ds, opts.VariableLength)
	return ds, nil
}

// loadDense builds the unprojected matrix of the checked vectors of f.
func loadDense(f *bbv.File, opts *Options) (*dataset, error) {
	n := len(f.Vectors)
	ds := &dataset{n: n, inDim: f.Dim, sums: make([]float64, n), w: make([]float64, n)}
	for i, v := range f.Vectors {
		ds.sums[i] = v.Sum()
	}
	ds.d = int(f.Dim)
	if int64(n)*int64(ds.d) > maxDenseElements {
		return nil, fmt.Errorf("phase: %d intervals × %d blocks is too large to cluster without projection; use a projection", n, f.Dim)
	}
	ds.setRows(make([]float64, n*ds.d))
	for i, v := range f.Vectors {
		row := ds.row(i)
		for j, b := range v.Blocks {
			row[b-1] += v.Counts[j] / ds.sums[i]
		}
	}
	setWeights(ds, opts.VariableLength)
	return ds, nil
}

// matrix generates the rows of SimPoint's random projection matrix as
// larger block ids appear: row r is the generator's values d·(r−1) …
// d·r−1 whatever the other ids, so the rows are those projectionRows
// gives for any dimension ≥ r.
type matrix struct {
	d     int
	rng   *ran2
	table []float64 // rows of ids 1..len(table)/d
}

// newMatrix returns the matrix of opts (opts.Dim ≥ 1).
func newMatrix(opts *Options) (*matrix, error) {
	rng := newRan2(opts.SeedProj)
	if rng.broken {
		return nil, errBrokenSeed("projection seed", opts.SeedProj)
	}
	return &matrix{d: opts.Dim, rng: rng}, nil
}

// row returns the row of block id b (≥ 1), generating the rows up to it
// first.
func (m *matrix) row(b int32) []float64 {
	d := m.d
	for int64(len(m.table)) < int64(b)*int64(d) {
		for c := 0; c < d; c++ {
			m.table = append(m.table, float64(m.rng.float())*2.0-1.0)
		}
	}
	return m.table[int(b-1)*d : int(b)*d]
}

// project normalises and projects v (checked: ids ≥ 1, counts finite and
// ≥ 0, a positive finite sum) into row, which must be zero, and returns
// v's sum.
func (m *matrix) project(row []float64, v bbv.Vector) float64 {
	sum := v.Sum()
	for j, b := range v.Blocks {
		val := v.Counts[j] / sum
		pr := m.row(b)
		for c := range row {
			// The conversion forbids fusing into an FMA, which
			// SimPoint (x86-64 SSE2) does not do.
			row[c] += float64(val * pr[c])
		}
	}
	return sum
}

// projector normalises and projects intervals one at a time, so that
// only the projected rows (d values each) and sums are kept, not the
// vectors.
type projector struct {
	d int
	m *matrix
	// The projected rows, rowsPerChunk to a chunk, so that growing them
	// never copies them; dataset joins them once.
	chunks [][]float64
	sums   []float64
	n      int
	inDim  int32
}

// rowsPerChunk is the number of rows of one chunk of a dataset or a
// projector, 1<<rowsShift.
const (
	rowsShift    = 14
	rowsPerChunk = 1 << rowsShift
)

// newProjector returns a projector for opts (opts.Dim ≥ 1).
func newProjector(opts *Options) (*projector, error) {
	m, err := newMatrix(opts)
	if err != nil {
		return nil, err
	}
	return &projector{d: opts.Dim, m: m}, nil
}

// next returns the zeroed row of the next interval.
func (p *projector) next() []float64 {
	if p.n%rowsPerChunk == 0 {
		p.chunks = append(p.chunks, make([]float64, rowsPerChunk*p.d))
	}
	j := p.n % rowsPerChunk
	return p.chunks[len(p.chunks)-1][j*p.d : (j+1)*p.d]
}

// add normalises and projects v, the next interval (checked as for
// matrix.project), and keeps its row and its sum. v is not retained.
func (p *projector) add(v bbv.Vector) {
	for _, b := range v.Blocks {
		p.inDim = max(p.inDim, b)
	}
	p.sums = append(p.sums, p.m.project(p.next(), v))
	p.n++
}

// addRow appends a row projected elsewhere with the same options.
func (p *projector) addRow(row []float64, sum float64) {
	copy(p.next(), row)
	p.sums = append(p.sums, sum)
	p.n++
}

// join appends the rows of q, projected with the same options, and
// releases each of q's chunks once it is copied, so that joining holds
// at most one chunk more than the rows; q must not be used afterwards.
func (p *projector) join(q *projector) {
	for i := 0; i < q.n; i++ {
		p.addRow(q.row(i), q.sums[i])
		if i%rowsPerChunk == rowsPerChunk-1 {
			q.chunks[i/rowsPerChunk] = nil
		}
	}
	p.inDim = max(p.inDim, q.inDim)
	q.chunks, q.sums = nil, nil
}

// row returns projected row i.
func (p *projector) row(i int) []float64 {
	j := i % rowsPerChunk
	return p.chunks[i/rowsPerChunk][j*p.d : (j+1)*p.d]
}

// dataset returns the rows added as a dataset with its weights, without
// copying them; the projector must not be used afterwards.
func (p *projector) dataset(variableLength bool) *dataset {
	if last := len(p.chunks) - 1; last >= 0 {
		// The last chunk is cut to the rows it holds: it was made for
		// rowsPerChunk rows (2 MB with 15 dimensions), and on an input of
		// tens of thousands of intervals its unused part was a tenth of
		// the rows' memory, held throughout the clustering.
		if used := (p.n - last*rowsPerChunk) * p.d; used < len(p.chunks[last]) {
			p.chunks[last] = slices.Clone(p.chunks[last][:used])
		}
	}
	ds := &dataset{n: p.n, d: p.d, inDim: p.inDim, project: true, chunks: p.chunks, sums: p.sums, w: make([]float64, p.n)}
	p.chunks, p.sums = nil, nil
	setWeights(ds, variableLength)
	return ds
}

// setWeights sets the row weights: each interval's share of the total
// count with variableLength, else 1/n.
func setWeights(ds *dataset, variableLength bool) {
	if variableLength {
		total := 0.0
		for _, s := range ds.sums {
			total += s
		}
		for i, s := range ds.sums {
			ds.w[i] = s / total
		}
	} else {
		for i := range ds.w {
			ds.w[i] = 1.0 / float64(ds.n)
		}
	}
}
