package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/parscope/parscope/plan"
)

// TestMeasuredMatchesPlan runs testdata/plan/two-clusters.yaml with every
// node and with the plan's choice at threshold 0.9, and checks the
// measured steady throughput against Perf_Ste (4.8): 30 tasks/s from the
// master's cluster (compute bound), 10 from the sub-cluster (its incoming
// internet link, 80 KiB/s for 8 KiB tasks, is saturated), 40 in all. The
// plan drops the 250 ms node of the sub-cluster; with the link saturated
// that must cost nothing.
func TestMeasuredMatchesPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the emulation for about 8 s")
	}
	sys, err := plan.ReadFile("../../testdata/plan/two-clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := compare(context.Background(), sys, []float64{0.9}, 120, 2)
	if err != nil {
		t.Fatal(err)
	}
	const tolSystem, tolCluster = 0.10, 0.15
	for _, c := range cs {
		m, p := c.Measured, c.Predicted
		if m.Tasks != 120 {
			t.Errorf("%s: %d results, want 120", c.Selection, m.Tasks)
		}
		t.Logf("%s: measured %.2f tasks/s, predicted %.2f", c.Selection, m.Throughput, p.PerfSte)
		if math.Abs(m.Throughput-p.PerfSte) > tolSystem*p.PerfSte {
			t.Errorf("%s: measured %.2f tasks/s, predicted %.2f (tolerance %.0f%%)", c.Selection, m.Throughput, p.PerfSte, 100*tolSystem)
		}
		for i, mc := range m.Clusters {
			pc := p.Clusters[i]
			t.Logf("  %s: measured %.2f, predicted %.2f", mc.Name, mc.Throughput, pc.PerfSte)
			if math.Abs(mc.Throughput-pc.PerfSte) > tolCluster*pc.PerfSte {
				t.Errorf("%s %s: measured %.2f tasks/s, predicted %.2f", c.Selection, mc.Name, mc.Throughput, pc.PerfSte)
			}
		}
	}
	all, chosen := cs[0].Measured, cs[1].Measured
	if cs[1].Predicted.Nodes != 4 || cs[0].Predicted.Nodes != 5 {
		t.Fatalf("plan uses %d of %d nodes, want 4 of 5", cs[1].Predicted.Nodes, cs[0].Predicted.Nodes)
	}
	if chosen.Throughput < 0.95*all.Throughput {
		t.Errorf("the chosen 4 nodes reach %.2f tasks/s, all 5 nodes %.2f: the plan's subset is worse", chosen.Throughput, all.Throughput)
	}
}

// TestBucketPaces checks the emulated link: 40 KiB through 80 KiB/s with
// a 4 KiB burst cannot take less than (40-4)/80 = 0.45 s, and arrives
// intact.
func TestBucketPaces(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	data := taskData(7, 40*1024)
	w := limitedConn{Conn: a, link: newBucket(80 * 1024)}
	start := time.Now()
	errc := make(chan error, 1)
	go func() { _, err := w.Write(data); errc <- err }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 450*time.Millisecond {
		t.Errorf("40 KiB crossed an 80 KiB/s link in %v", d)
	}
	if !bytes.Equal(got, data) {
		t.Error("data changed on the link")
	}
	// An unlimited link does not wait.
	if d := newBucket(0).reserve(1 << 30); d != 0 {
		t.Errorf("unlimited link waits %v", d)
	}
}

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	task := taskData(3, payloadSize(8192))
	if err := writeFrame(&buf, frame{kind: kindTask, id: 3, payload: task}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 8192 {
		t.Errorf("a task frame is %d bytes on the wire, want S_Task = 8192", buf.Len())
	}
	f, err := readFrame(&buf)
	if err != nil || f.kind != kindTask || f.id != 3 || !bytes.Equal(f.payload, task) {
		t.Fatalf("frame round trip: %v %+v", err, f.id)
	}
	res := compute(task, 100)
	if err := checkResult(3, len(task), res); err != nil {
		t.Error(err)
	}
	if err := checkResult(4, len(task), res); !errors.Is(err, errBadResult) {
		t.Errorf("a result for another task accepted: %v", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{2, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})); err == nil {
		t.Error("a 4 GiB frame length accepted")
	}
}

func TestRunRejects(t *testing.T) {
	sys, err := plan.ReadFile("../../testdata/plan/two-clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{System: sys, Tasks: 5},
		{System: sys, Tasks: 100, Use: [][]bool{{true}}},
		{System: sys, Tasks: 100, Use: [][]bool{{false, false}, {false, false, false}}},
		{System: plan.System{}, Tasks: 100},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("config %+v accepted", cfg.Use)
		}
	}
}
