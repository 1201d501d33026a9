package instrument

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	rtrace "runtime/trace"
	"testing"

	"github.com/parscope/parscope/trace"
)

var sinkBool bool

// BenchmarkRecordBlock compares, in one run, the cost of recording one
// block entry (timestamp included) with parscope, with a dropping filter,
// with runtime/trace (trace.Log of a constant message into io.Discard, the
// closest equivalent of one timestamped event with an id) and with the
// papers' method (Gomez, Cai & Schubert 2017: a formatted "time block pid" line per event into a
// bufio.Writer on a file).
func BenchmarkRecordBlock(b *testing.B) {
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
	}
	record := func(b *testing.B, opts Options) {
		opts.Path = filepath.Join(b.TempDir(), "bench.pst")
		rec, err := Start(opts)
		if err != nil {
			b.Fatal(err)
		}
		p := rec.Process(0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			p.Block(int32(i & 7))
		}
		b.StopTimer()
		report(b)
		rec.Abort()
	}
	b.Run("parscope", func(b *testing.B) { record(b, Options{}) })
	b.Run("parscope-monotonic", func(b *testing.B) {
		defer setTSC(false)()
		record(b, Options{})
	})
	b.Run("parscope-nil", func(b *testing.B) {
		var p *Process
		for i := 0; i < b.N; i++ {
			p.Block(int32(i & 7))
		}
		report(b)
	})
	var drop Filter = dropBlock{}
	b.Run("filter-alone", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkBool = drop.Keep(0, trace.KindState, 2, int64(i))
		}
		report(b)
	})
	b.Run("filter-with-timestamp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkBool = drop.Keep(0, trace.KindState, 2, ticks())
		}
		report(b)
	})
	// One block id over and over, after a first one: the dropping paths.
	dropping := func(b *testing.B, opts Options) {
		opts.Path = filepath.Join(b.TempDir(), "bench.pst")
		rec, err := Start(opts)
		if err != nil {
			b.Fatal(err)
		}
		p := rec.Process(0)
		p.Block(2)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			p.Block(2)
		}
		b.StopTimer()
		report(b)
		rec.Abort()
	}
	b.Run("parscope-filter-drop", func(b *testing.B) { dropping(b, Options{Filter: drop}) })
	// A block the throttle drops (Throttle 1, the default filter off): it
	// costs a count, not a clock reading (Process.quickThrottle).
	b.Run("parscope-throttled", func(b *testing.B) { dropping(b, Options{Throttle: 1}) })
	b.Run("parscope-occupancy-bbv", func(b *testing.B) {
		record(b, Options{Occupancy: true, BBVInterval: 1 << 20})
	})
	names := []string{"0", "1", "2", "3", "4", "5", "6", "7"}
	b.Run("runtime-trace-log", func(b *testing.B) {
		if err := rtrace.Start(io.Discard); err != nil {
			b.Skip(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			rtrace.Log(ctx, "block", names[i&7])
		}
		b.StopTimer()
		rtrace.Stop()
		report(b)
	})
	b.Run("gomez-fprintf", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "trace.txt"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		start := nanotime()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			fmt.Fprintf(w, "%d %d %d\n", (nanotime()-start)/1000, i&7, 0)
		}
		w.Flush()
		b.StopTimer()
		report(b)
	})
}

// BenchmarkProcessLifecycle measures what a short-lived goroutine of a
// rewritten program pays to be a process of its own: creating the
// process, one block, and Done (which flushes it to the spill file), as
// a rewritten go statement does, with 1,024-record buffers as there;
// "rewritten" adds what a rewritten program records with by default (the
// entropy filter over 10 states, the throttle, and the goroutine's id).
func BenchmarkProcessLifecycle(b *testing.B) {
	for _, rewritten := range []bool{false, true} {
		name := "plain"
		if rewritten {
			name = "rewritten"
		}
		b.Run(name, func(b *testing.B) {
			o := Options{Path: filepath.Join(b.TempDir(), "bench.pst"), BufferRecords: 1024}
			if rewritten {
				f, err := NewEntropyFilter(EntropyOptions{Config: DefaultEntropyConfig(), Threshold: DefaultEntropyThreshold, Dynamic: true, Alphabet: 10})
				if err != nil {
					b.Fatal(err)
				}
				o.Filter, o.Throttle = f, 100000
			}
			rec, err := Start(o)
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Abort()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if rewritten {
					Goid()
				}
				p := rec.Process(i % trace.MaxProcs)
				p.Block(1)
				if err := p.Done(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkShortRecording measures a recording's fixed cost: Start, one
// process recording four blocks, and Close writing the .pst, as a
// rewritten hello-world does (its filter and throttle included), to a new
// path each time and replacing the .pst of the time before (Force), as a
// program run again with the same output does.
func BenchmarkShortRecording(b *testing.B) {
	for _, replace := range []bool{false, true} {
		name := "new"
		if replace {
			name = "replace"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				f, err := NewEntropyFilter(EntropyOptions{Config: DefaultEntropyConfig(), Threshold: DefaultEntropyThreshold, Dynamic: true, Alphabet: 4})
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(dir, fmt.Sprint(i, ".pst"))
				if replace {
					path = filepath.Join(dir, "short.pst")
				}
				rec, err := Start(Options{Path: path, Force: true, Filter: f, Throttle: 100000, BufferRecords: 1024,
					States: []trace.StateDef{{ID: 0, Name: "start"}, {ID: 1, Name: "entry"}, {ID: 2, Name: "exit"}, {ID: 3, Name: "end"}}})
				if err != nil {
					b.Fatal(err)
				}
				p := rec.Process(0)
				for id := range int32(4) {
					p.Block(id)
				}
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
