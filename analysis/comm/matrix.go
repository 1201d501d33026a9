package comm

// Matrix is an n×n communication matrix: Bytes[src*N+dst] bytes in
// Count[src*N+dst] messages sent from process src to process dst.
type Matrix struct {
	N     int     `json:"n"`
	Bytes []int64 `json:"bytes"`
	Count []int64 `json:"count"`
}

// NewMatrix returns an empty n×n matrix.
func NewMatrix(n int) *Matrix {
	return &Matrix{N: n, Bytes: make([]int64, n*n), Count: make([]int64, n*n)}
}

// At returns the bytes and the number of messages sent from src to dst.
func (m *Matrix) At(src, dst int) (bytes, count int64) {
	i := src*m.N + dst
	return m.Bytes[i], m.Count[i]
}

// AddMatrix adds o (of the same size) into m.
func (m *Matrix) AddMatrix(o *Matrix) {
	for i := range m.Bytes {
		m.Bytes[i] += o.Bytes[i]
		m.Count[i] += o.Count[i]
	}
}

// Totals returns the bytes and messages of the whole matrix.
func (m *Matrix) Totals() (bytes, count int64) {
	for i := range m.Bytes {
		bytes += m.Bytes[i]
		count += m.Count[i]
	}
	return bytes, count
}

// Pairs returns the number of (src, dst) pairs that carried at least one
// message.
func (m *Matrix) Pairs() int {
	k := 0
	for _, c := range m.Count {
		if c > 0 {
			k++
		}
	}
	return k
}

// Degrees returns, per process, its communication degree: the number of
// distinct partners it sent to or received from (itself excluded).
func (m *Matrix) Degrees() []int { return m.degrees(true) }

// OutDegrees returns, per process, the number of distinct destinations it
// sent to (itself excluded): the paper's "favoured destinations".
func (m *Matrix) OutDegrees() []int { return m.degrees(false) }

func (m *Matrix) degrees(both bool) []int {
	n := m.N
	d := make([]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && (m.Count[i*n+j] > 0 || (both && m.Count[j*n+i] > 0)) {
				d[i]++
			}
		}
	}
	return d
}

// Values returns the matrix as rows of float64: bytes, or message counts
// when count is true. It is what the heat-map renderer draws.
func (m *Matrix) Values(count bool) [][]float64 {
	src := m.Bytes
	if count {
		src = m.Count
	}
	out := make([][]float64, m.N)
	for i := range out {
		out[i] = make([]float64, m.N)
		for j := range out[i] {
			out[i][j] = float64(src[i*m.N+j])
		}
	}
	return out
}
