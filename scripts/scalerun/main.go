// Command scalerun measures the in-process engine on a big generated trace:
// it synthesises a trace of -records records (trace/tracetest streams, never
// stored) and feeds the occupancy, communication and histogram-entropy
// accumulators with every core, printing the throughput of each. Run it
// under /usr/bin/time -v for the peak memory:
//
//	go build -o /tmp/scalerun ./scripts/scalerun
//	/usr/bin/time -v /tmp/scalerun -records 1000000000
//
// Each analysis is split the way its accumulator merges:
//
//   - occupancy: consecutive time shards, each an occupancy.Accumulator
//     beginning at its first record, merged in time order;
//   - comm: one comm.Accumulator per group of processes (every worker reads
//     the stream and keeps its processes' records), merged;
//   - entropy: histogram entropy per time window: a first pass finds the
//     last state of every process in each time shard, a prefix over the
//     shards seeds each shard's state reconstruction (state.Options Seed,
//     From, To), and each shard's windows are computed independently.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/cputime"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

func main() {
	var (
		records  = flag.Int64("records", 1_000_000_000, "records to generate")
		procs    = flag.Int("procs", 64, "processes of the generated run")
		workers  = flag.Int("workers", runtime.NumCPU(), "parallel workers")
		shardsPW = flag.Int("shards-per-worker", 4, "time shards per worker")
		window   = flag.Int64("window", 1_000_000, "histogram-entropy window (ns; a multiple of 1000)")
		which    = flag.String("analyses", "occupancy,comm,entropy", "analyses to run")
		asJSON   = flag.Bool("json", false, "print the report as JSON")
		save     = flag.String("store", "", "write the generated trace to this .pst instead of analysing it")
	)
	flag.Parse()
	g, err := newGen(int32(*procs), *records, *window, *workers**shardsPW)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalerun:", err)
		os.Exit(2)
	}
	if *save != "" {
		if err := g.save(*save); err != nil {
			fmt.Fprintln(os.Stderr, "scalerun:", err)
			os.Exit(1)
		}
		return
	}
	ctx := context.Background()
	var reps []report
	for _, name := range strings.Split(*which, ",") {
		var run func(context.Context, *gen, int) (string, error)
		switch strings.TrimSpace(name) {
		case "occupancy":
			run = runOccupancy
		case "comm":
			run = runComm
		case "entropy":
			run = runEntropy
		default:
			fmt.Fprintf(os.Stderr, "scalerun: unknown analysis %q (occupancy, comm, entropy)\n", name)
			os.Exit(2)
		}
		runtime.GC()
		start, cpu0 := time.Now(), cputime.Used()
		summary, err := run(ctx, g, *workers)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scalerun: %s: %v\n", name, err)
			os.Exit(1)
		}
		d, cpu := time.Since(start), cputime.Used()-cpu0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rep := report{Analysis: name, Records: g.total, Procs: *procs, Workers: *workers, Seconds: d.Seconds(),
			RecordsPerSecond: float64(g.total) / d.Seconds(), CPUSeconds: cpu.Seconds(),
			RecordsPerCPUSecond: float64(g.total) / cpu.Seconds(), HeapSysMiB: float64(ms.HeapSys) / (1 << 20), Summary: summary}
		reps = append(reps, rep)
		if !*asJSON {
			fmt.Printf("%-9s %d records, %d procs, %d workers: %.1f s (%.1f s CPU), %.3g records/s (%.3g per CPU second), heap %.0f MiB; %s\n",
				rep.Analysis, rep.Records, rep.Procs, rep.Workers, rep.Seconds, rep.CPUSeconds, rep.RecordsPerSecond, rep.RecordsPerCPUSecond, rep.HeapSysMiB, rep.Summary)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reps); err != nil {
			fmt.Fprintln(os.Stderr, "scalerun:", err)
			os.Exit(1)
		}
	}
}

// report is one analysis's measurement.
type report struct {
	Analysis         string  `json:"analysis"`
	Records          int64   `json:"records"`
	Procs            int     `json:"procs"`
	Workers          int     `json:"workers"`
	Seconds          float64 `json:"seconds"`
	RecordsPerSecond float64 `json:"records_per_second"`
	// CPUSeconds is the process's user+system time for the analysis: on a
	// loaded machine records per CPU second is the figure that does not
	// depend on the other jobs.
	CPUSeconds          float64 `json:"cpu_seconds"`
	RecordsPerCPUSecond float64 `json:"records_per_cpu_second"`
	HeapSysMiB          float64 `json:"heap_sys_mib"`
	Summary             string  `json:"summary"`
}

// gen describes the generated trace and its time shards.
type gen struct {
	h      *trace.Header
	procs  int32
	total  int64   // records
	steps  int64   // 1 µs steps
	window int64   // histogram-entropy window (ns)
	bounds []int64 // shard k covers steps [bounds[k], bounds[k+1])
}

// recordsBefore is the number of records tracetest.Stream produces in
// steps [0, s): 4 per process and step, 2 more every tenth step.
func recordsBefore(procs int32, s int64) int64 {
	return 4*int64(procs)*s + 2*int64(procs)*((s+9)/10)
}

func newGen(procs int32, records, window int64, shards int) (*gen, error) {
	if procs < 2 || procs > comm.MaxProcs {
		return nil, fmt.Errorf("-procs %d: want 2..%d", procs, comm.MaxProcs)
	}
	if records <= 0 || window <= 0 || window%1000 != 0 || shards < 1 {
		return nil, errors.New("-records, -window (a multiple of 1000 ns) and the shards must be positive")
	}
	steps := records / (4 * int64(procs))
	for recordsBefore(procs, steps) < records {
		steps++
	}
	for steps > 0 && recordsBefore(procs, steps-1) >= records {
		steps--
	}
	// Shards hold whole entropy windows.
	ws := window / 1000
	per := (steps + int64(shards) - 1) / int64(shards)
	per = (per + ws - 1) / ws * ws
	g := &gen{procs: procs, total: records, steps: steps, window: window}
	for s := int64(0); s < steps; s += per {
		g.bounds = append(g.bounds, s)
	}
	g.bounds = append(g.bounds, steps)
	g.h = tracetest.Header(procs)
	return g, nil
}

// shard returns a reader of the records of shard k.
func (g *gen) shard(k int) trace.Reader {
	from, to := g.bounds[k], g.bounds[k+1]
	n := min(recordsBefore(g.procs, to), g.total) - recordsBefore(g.procs, from)
	return &tracetest.Stream{Procs: g.procs, From: from, Limit: int(n)}
}

// save writes the generated trace to a new .pst at path.
func (g *gen) save(path string) error {
	w, err := store.Create(path, store.Options{})
	if err != nil {
		return err
	}
	defer w.Abort()
	*w.Header() = *g.h
	for k := range len(g.bounds) - 1 {
		if err := feed(g.shard(k), func(r *trace.Record) error { return w.Add(*r) }); err != nil {
			return err
		}
	}
	return w.Close()
}

// parallel runs fn(k) for k in [0, n) on w workers, returning the first error.
func parallel(n, w int, fn func(k int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs []error
	)
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				stop := len(errs) > 0
				mu.Unlock()
				if k >= n || stop {
					return
				}
				if err := fn(k); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// feed calls add for every record of r.
func feed(r trace.Reader, add func(*trace.Record) error) error {
	buf := make([]trace.Record, 512)
	for {
		n, err := r.Read(buf)
		for i := range n {
			if e := add(&buf[i]); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func runOccupancy(_ context.Context, g *gen, w int) (string, error) {
	modes := occupancy.StateModes(g.h)
	n := len(g.bounds) - 1
	accs := make([]*occupancy.Accumulator, n)
	err := parallel(n, w, func(k int) error {
		a, err := occupancy.NewAccumulator(modes, int(g.procs), g.bounds[k]*1000, occupancy.Options{})
		if err != nil {
			return err
		}
		if err := feed(g.shard(k), a.Add); err != nil {
			return err
		}
		accs[k] = a
		return nil
	})
	if err != nil {
		return "", err
	}
	for k := 1; k < n; k++ {
		if err := accs[0].Merge(accs[k]); err != nil {
			return "", err
		}
		accs[k] = nil
	}
	res, err := accs[0].Result(0)
	if err != nil {
		return "", err
	}
	if res.Records != g.total {
		return "", fmt.Errorf("occupancy counted %d records of %d", res.Records, g.total)
	}
	return fmt.Sprintf("%d macrostates, %d microstates, %d time shards", len(res.Table), res.Microstates, n), nil
}

func runComm(_ context.Context, g *gen, w int) (string, error) {
	accs := make([]*comm.Accumulator, w)
	err := parallel(w, w, func(k int) error {
		a, err := comm.New(g.h, comm.Options{})
		if err != nil {
			return err
		}
		// Every worker reads the whole stream and keeps the records of a
		// block of consecutive processes, so that the messages between
		// neighbours are matched inside the block and the matcher's
		// unmatched sides stay bounded.
		lo, hi := groupBounds(int(g.procs), w, k)
		for s := range len(g.bounds) - 1 {
			r := trace.Filter(g.shard(s), func(r *trace.Record) bool { return int(r.Proc) >= lo && int(r.Proc) < hi })
			if err := feed(r, a.Add); err != nil {
				return err
			}
		}
		accs[k] = a
		return nil
	})
	if err != nil {
		return "", err
	}
	for k := 1; k < w; k++ {
		if err := accs[0].Merge(accs[k]); err != nil {
			return "", err
		}
	}
	res := accs[0].Result()
	bytes, count := res.Nodes[0].AggregateMatrix().Totals()
	return fmt.Sprintf("%d structures, %d messages matched, %d messages / %d bytes in the matrices, %d process groups",
		len(res.Nodes), res.Matched, count, bytes, w), nil
}

// groupBounds returns the processes [lo, hi) of group k of w, in blocks of
// an even number of processes.
func groupBounds(procs, w, k int) (lo, hi int) {
	per := (procs + w - 1) / w
	per += per % 2
	return min(k*per, procs), min((k+1)*per, procs)
}

func runEntropy(ctx context.Context, g *gen, w int) (string, error) {
	n := len(g.bounds) - 1
	// Pass 1: the last state of every process in each shard (-1: none).
	last := make([][]int32, n)
	err := parallel(n, w, func(k int) error {
		l := make([]int32, g.procs)
		for i := range l {
			l[i] = -1
		}
		err := feed(g.shard(k), func(r *trace.Record) error {
			if r.Kind == trace.KindState {
				l[r.Proc] = r.ID
			}
			return nil
		})
		last[k] = l
		return err
	})
	if err != nil {
		return "", err
	}
	seeds := make([][]int32, n)
	cur := make([]int32, g.procs)
	for i := range cur {
		cur[i] = state.Absent
	}
	for k := range n {
		seeds[k] = slices.Clone(cur)
		for i, v := range last[k] {
			if v >= 0 {
				cur[i] = v
			}
		}
	}
	// Pass 2: each shard's windows, from its seed.
	points := make([][]entropy.WindowPoint, n)
	err = parallel(n, w, func(k int) error {
		win, err := entropy.NewWindows(g.window)
		if err != nil {
			return err
		}
		opts := state.Options{Seed: seeds[k], From: g.bounds[k] * 1000, Run: 0}
		if k+1 < n {
			opts.To = g.bounds[k+1] * 1000
		}
		r := trace.Filter(g.shard(k), func(r *trace.Record) bool { return r.Kind == trace.KindState })
		if err := state.Reconstruct(ctx, g.h, r, opts, win.Add); err != nil {
			return err
		}
		points[k] = win.Result()
		return nil
	})
	if err != nil {
		return "", err
	}
	var count int
	var sum float64
	for _, ps := range points {
		for _, p := range ps {
			count++
			sum += p.Entropy
		}
	}
	return fmt.Sprintf("%d windows, mean histogram entropy %.6f bits, %d time shards", count, sum/float64(max(count, 1)), n), nil
}
