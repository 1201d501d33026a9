package phase

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkCompat times the whole compat pipeline (normalise, project,
// k search, post-processing) with SimPoint's default options on the two
// real data sets, parsing excluded. SimPoint 3.2 takes 0.03 s
// (bzip2_rt_100M) and 0.07 s (phases) on the reference machine.
func BenchmarkCompat(b *testing.B) {
	for _, name := range []string{"bzip2_rt_100M", "phases"} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				f := loadBB(b, name+".bb.gz")
				opts := DefaultOptions()
				opts.Workers = workers
				for b.Loop() {
					if _, err := Run(context.Background(), f, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDefault times Default mode with the same search on the two
// real data sets.
func BenchmarkDefault(b *testing.B) {
	for _, name := range []string{"bzip2_rt_100M", "phases"} {
		b.Run(name, func(b *testing.B) {
			f := loadBB(b, name+".bb.gz")
			opts := DefaultOptions()
			opts.Mode = Default
			for b.Loop() {
				if _, err := Run(context.Background(), f, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
