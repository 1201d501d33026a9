package mentropy_test

import (
	"fmt"
	"strings"

	"github.com/parscope/parscope/analysis/mentropy"
)

// The slave column of the paper's Table 4: W = 4, K = 100, uniform p = 1/5.
func ExampleSeries() {
	c := mentropy.Config{Window: 4, K: 100, Alpha: []float64{0.5, 0.7, 0.8, 0.9, 0.99}, Beta: []float64{0.5, 0.3, 0.2, 0.1, 0.01}}
	ids, a := mentropy.Encode(strings.Fields("prog_st recv1 do_calc do_calc do_calc do_calc do_calc do_calc send_res prog_sp"))
	steps, err := mentropy.Series(c, mentropy.UniformProbs(len(a.Names())), ids, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, s := range steps {
		fmt.Printf("%-8s %-5s I=%d H=%.6f\n", a.Names()[ids[i]], s.Case, s.I, s.H)
	}
	// Output:
	// prog_st  beta  I=0 H=6.931472
	// recv1    beta  I=0 H=6.931472
	// do_calc  beta  I=0 H=6.931472
	// do_calc  alpha I=1 H=0.499345
	// do_calc  alpha I=2 H=0.024992
	// do_calc  alpha I=3 H=0.000743
	// do_calc  alpha I=4 H=0.000004
	// do_calc  alpha I=4 H=0.000004
	// send_res beta  I=4 H=0.921034
	// prog_sp  beta  I=0 H=6.931472
}

// A Meter consumes a stream event by event (the online filter's use).
func ExampleMeter() {
	c := mentropy.Config{Window: 4, K: 100, Alpha: []float64{0.1, 0.3, 0.6, 0.9}, Beta: []float64{0.45, 0.35, 0.20, 0.05}, Variant: mentropy.VariantW}
	m, err := mentropy.NewMeter(c, mentropy.GivenProbs([]float64{0.2, 0.4, 0.4})) // A, B, C
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range []int32{0, 1, 1, 1, 1, 2} { // A B B B B C
		s, _ := m.Next(e)
		fmt.Printf("%.6f\n", s.H)
	}
	// Output:
	// 7.186569
	// 2.995732
	// 0.094824
	// 0.275846
	// 0.195044
	// 2.328448
}
