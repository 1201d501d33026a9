package meter

import "testing"

// table4 is Table 4's configuration with K = 100, as the filter and the
// analysis' tests use it.
var table4 = Config{Window: 4, K: 100, Alpha: []float64{0.5, 0.7, 0.8, 0.9, 0.99},
	Beta: []float64{0.5, 0.3, 0.2, 0.1, 0.01}}

func TestNextNoAlloc(t *testing.T) {
	for _, v := range []Variant{VariantR, VariantW} {
		c := table4
		c.Variant = v
		if v == VariantW {
			c.Alpha, c.Beta = c.Alpha[:4], c.Beta[:4]
		}
		m, err := NewMeter(c, LearnedProbs(3))
		if err != nil {
			t.Fatal(err)
		}
		ev := int32(0)
		allocs := testing.AllocsPerRun(1000, func() {
			ev = (ev + 1) % 3
			_, _ = m.Next(ev / 2)
		})
		if allocs != 0 {
			t.Errorf("variant %s: %v allocations per event", v, allocs)
		}
	}
}

// benchStream is the benchmark stream: runs of a few events with long
// repeats, as a master/worker process emits them.
func benchStream(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		switch j := i % 104; {
		case j < 2:
			out[i] = int32(j)
		case j < 102:
			out[i] = 2
		default:
			out[i] = int32(j - 99)
		}
	}
	return out
}

func BenchmarkNext(b *testing.B) {
	for _, v := range []Variant{VariantR, VariantW} {
		b.Run(string(v), func(b *testing.B) {
			c := table4
			c.Variant = v
			if v == VariantW {
				c.Alpha, c.Beta = c.Alpha[:4], c.Beta[:4]
			}
			m, _ := NewMeter(c, UniformProbs(5))
			evs := benchStream(1 << 12)
			b.ReportAllocs()
			b.ResetTimer()
			var sum float64
			for i := 0; i < b.N; i++ {
				s, _ := m.Next(evs[i&(1<<12-1)])
				sum += s.H
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
			_ = sum
		})
	}
}

func BenchmarkSeries(b *testing.B) {
	evs := benchStream(1 << 20)
	dst := make([]Step, 0, len(evs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		dst, err = Series(table4, UniformProbs(5), evs, dst[:0])
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(evs))/b.Elapsed().Seconds(), "events/s")
}
