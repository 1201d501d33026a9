package comm

import (
	"slices"
	"testing"
)

func TestMatrixCoarsen(t *testing.T) {
	m := NewMatrix(3)
	for i := range m.Bytes {
		m.Bytes[i] = int64(i + 1)
		m.Count[i] = 1
	}
	c := m.Coarsen(2)
	// [1 2 3; 4 5 6; 7 8 9] in 2×2 blocks.
	if c.N != 2 || !slices.Equal(c.Bytes, []int64{12, 9, 15, 9}) || !slices.Equal(c.Count, []int64{4, 2, 2, 1}) {
		t.Errorf("coarsen: %+v", c)
	}
	if m.Coarsen(1) != m {
		t.Error("coarsen by 1 copied the matrix")
	}
}
