package main

import (
	"flag"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/mentropy"
)

// TestBindGoFlags checks that parscope-beam takes mentropy's options under
// parscope's flag names, with its defaults (Table 4's), on Go's flag set.
func TestBindGoFlags(t *testing.T) {
	fl := flag.NewFlagSet("beam", flag.ContinueOnError)
	p := mentropy.DefaultParams()
	if err := bindGoFlags(fl, p); err != nil {
		t.Fatal(err)
	}
	if err := fl.Parse([]string{"--window-events", "3", "--alpha", "0.5,0.6,0.7,0.8", "--beta=0.4,0.3,0.2,0.1", "--K", "100", "--learned", "--of", "states", "--procs", "1-2"}); err != nil {
		t.Fatal(err)
	}
	if p.WindowEvents != 3 || !slices.Equal(p.Alpha, []float64{0.5, 0.6, 0.7, 0.8}) || p.Beta[3] != 0.1 || p.K != 100 || !p.Learned || p.Of != "states" || !slices.Equal(p.Procs, []int32{1, 2}) {
		t.Errorf("parsed %+v", p)
	}
	if _, _, _, err := p.Config(); err != nil {
		t.Error(err)
	}
	d := mentropy.DefaultParams()
	if fl := fl.Lookup("alpha"); fl == nil || fl.DefValue != "[0.500000,0.700000,0.800000,0.900000,0.990000]" {
		t.Errorf("--alpha's default %v, Table 4's %v", fl, d.Alpha)
	}
	if err := fl.Parse([]string{"--alpha", "x"}); err == nil {
		t.Error("--alpha x accepted")
	}
}
