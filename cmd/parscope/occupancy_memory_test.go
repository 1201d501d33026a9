package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace/tracetest"
)

// csvRows counts the rows of the occupancy CSV written to it and sums
// their occupancy (the last field), without keeping them.
type csvRows struct {
	line      []byte
	rows, sum int64
	bad       string
}

func (c *csvRows) Write(p []byte) (int, error) {
	for _, b := range p {
		if b != '\n' {
			c.line = append(c.line, b)
			continue
		}
		if c.rows++; c.rows > 1 {
			v, err := strconv.ParseInt(string(c.line[bytes.LastIndexByte(c.line, ',')+1:]), 10, 64)
			if err != nil && c.bad == "" {
				c.bad = string(c.line)
			}
			c.sum += v
		}
		c.line = c.line[:0]
	}
	return len(p), nil
}

// TestOccupancyRandomMemory runs what `parscope occupancy` runs, on 10^7
// random state records of 64 processes among 8 states (one record per
// ns: nearly every record a new macrostate, millions in all), under a
// 384 MiB memory limit: the default answer (the summary and the top rows)
// and the whole table streamed as CSV (--all --csv). Holding the table
// took 2.5 GB for 5·10^6 records. The summary is checked against what is
// computed apart: the mean node occupancy from the per-process counters,
// and the rows streamed, which must be as many as the macrostates
// observed and sum to the run's time.
func TestOccupancyRandomMemory(t *testing.T) {
	n := 10_000_000
	if memlimit.Race {
		n = 100_000
	}
	memlimit.Run(t, 384<<20, func(t *testing.T) {
		g := &tracetest.RandomStates{Procs: 64, States: 8, Limit: n, Seed: 1}
		path := filepath.Join(t.TempDir(), "random.pst")
		storetest.CreateFrom(t, path, g.Header(), g)
		s := storetest.Open(t, path)
		res, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: occupancy.Name}})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Envelopes[0].Result.(*occupancy.Report).Runs[0]
		if r.StateRecords != int64(n) || r.ObservedMacrostates < n/3 || len(r.Table) != occupancy.DefaultTop ||
			r.TableOmitted != r.ObservedMacrostates-occupancy.DefaultTop || r.EndNS != int64(n-1) {
			t.Fatalf("%d records, %d macrostates, %d rows shown, %d omitted, end %d", r.StateRecords, r.ObservedMacrostates, len(r.Table), r.TableOmitted, r.EndNS)
		}
		for _, m := range r.Mean {
			if math.Abs(m.GlobalNS-m.LocalNS) > 1e-9*float64(r.EndNS) {
				t.Errorf("mode %s: %v ns from the table, %v from the per-process counters", m.Mode, m.GlobalNS, m.LocalNS)
			}
		}
		t.Logf("%d macrostates observed", r.ObservedMacrostates)

		params := occupancy.DefaultParams()
		params.Top = 0
		res, err = engine.Run(context.Background(), s, []engine.Request{{Analysis: occupancy.Name, Options: params}})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Envelopes[0].Result.(*occupancy.Report)
		defer rep.Close()
		var out csvRows
		if err := writeOccupancyCSV(&out, rep); err != nil {
			t.Fatal(err)
		}
		if out.bad != "" || out.rows-1 != int64(r.ObservedMacrostates) || out.sum != r.EndNS-r.BeginNS {
			t.Fatalf("--all --csv: %d rows summing to %d ns (bad row %q); want %d rows summing to %d ns",
				out.rows-1, out.sum, out.bad, r.ObservedMacrostates, r.EndNS-r.BeginNS)
		}
	})
}
