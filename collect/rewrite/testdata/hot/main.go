// Command hot is a hot loop around a one-line function, like the
// shootout's spectral-norm: the rewritten program must still inline it.
package main

import "fmt"

func evalA(i, j int) float64 { return 1 / float64(((i+j)*(i+j+1)/2 + i + 1)) }

// times multiplies u by the matrix A into v.
func times(v, u []float64) {
	for i := range v {
		a := 0.0
		for j := range u {
			a += evalA(i, j) * u[j]
		}
		v[i] = a
	}
}

// sign is small but not a leaf of the size rule's kind: it has a loop.
func sign(v []float64) int {
	for _, x := range v {
		if x < 0 {
			return -1
		}
	}
	return 1
}

func main() {
	u := []float64{1, 1, 1, 1}
	v := make([]float64, len(u))
	times(v, u)
	fmt.Printf("%.6f %d\n", v[0]+v[3], sign(v))
}
