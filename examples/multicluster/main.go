// Command multicluster runs a master/worker application over emulated
// clusters and compares the throughput it achieves with the steady
// performance that package plan predicts (Strube 2011, §4.10, eq. 4.8–4.9):
//
//	go run ./examples/multicluster -config testdata/plan/two-clusters.yaml [-tasks 200] [-thresholds 0.9,0.7] [-json]
//
// It reads the same YAML as `parscope plan`, runs the system with every
// node and with the nodes the plan chooses at each threshold (a choice
// equal to one already run is skipped), and prints predicted and measured
// tasks per second and efficiency, per cluster and in all.
//
// Everything is real TCP on loopback, in one process:
//
//   - the master hands out tasks (S_Task bytes on the wire, data derived
//     from the task id) and checks every result (S_Result bytes, carrying
//     a hash of the task's data);
//   - the workers of the master's cluster connect to it directly, through
//     the cluster's LAN;
//   - every sub-cluster has a sub-master (the thesis's communication
//     manager) that connects to the master through the emulated internet
//     link and serves its own workers through its LAN;
//   - every link is a token bucket (link.go) that paces the writes: a
//     cluster's LAN is one bucket shared by tasks and results (TPut_EC for
//     S_Comm = S_Task + S_Result), the internet link one bucket per
//     direction (TPut_InetIN carries tasks, TPut_InetOUT results).
//
// A node's speed is emulated: a worker hashes the task and then holds it
// until its task time has passed since it started it (a deadline chain, so
// that late timer wake-ups do not add up). Spinning the CPU instead would
// make seven workers on two shared cores run at whatever speed the machine
// load allows, not at the speeds the plan is given; the emulation checks
// the model's network and scheduling side, which is what equation (4.8)
// adds to the nodes' task times.
//
// Workers hold Window tasks at once (one computing, the others prefetched,
// as the thesis's workers receive their next task in the background) and
// send results while computing the next task. A sub-master asks the
// master for as many tasks as its workers hold, plus two in transit.
//
// Throughput is measured in the steady state: from the completion of 15%
// of the tasks to the earlier of 90% completed and the moment the master
// handed out its last task.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/parscope/parscope/plan"
)

// Config is one emulated run.
type Config struct {
	System plan.System
	// Use[c][i] selects node i of cluster c; nil uses every node. A cluster
	// without a selected node is not started.
	Use [][]bool
	// Tasks is the number of tasks of the run.
	Tasks int
	// Window is how many tasks a worker holds at once; 0 means 2.
	Window int
}

// ClusterResult is one cluster's share of a Result.
type ClusterResult struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	// Tasks is the number of its results in the steady window.
	Tasks int `json:"tasks"`
	// Throughput is Tasks over the window, tasks per second.
	Throughput float64 `json:"throughput"`
	// Efficiency is the work its used workers did in the window over what
	// they could have done: Σ task times of its results / (window · nodes).
	Efficiency float64 `json:"efficiency"`
}

// Result is what a run measured.
type Result struct {
	Tasks   int           `json:"tasks"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// From and To bound the steady window, from the start of the run.
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
	// Throughput is the results per second in the window.
	Throughput float64 `json:"throughput"`
	// Efficiency is the work done in the window over the used nodes'
	// capacity, as ClusterResult.Efficiency.
	Efficiency float64         `json:"efficiency"`
	Clusters   []ClusterResult `json:"clusters"`
}

// completion is one result received by the master.
type completion struct {
	at       time.Duration
	cluster  int
	taskTime float64
}

// run is the state of one emulated run.
type run struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
	wg     sync.WaitGroup

	errOnce sync.Once
	err     error

	connMu sync.Mutex
	conns  []net.Conn

	pool     chan uint32
	taken    atomic.Int64
	poolDone atomic.Int64 // ns since start when the last task was handed out

	mu      sync.Mutex
	done    []completion
	seen    []bool
	allDone chan struct{}

	// nodeTime maps "cluster/node" to the node's task time.
	nodeTime map[string]float64
}

func (r *run) fail(err error) {
	r.errOnce.Do(func() { r.err = err })
	r.cancel()
}

// track registers a connection to close when the run ends.
func (r *run) track(c net.Conn) {
	r.connMu.Lock()
	r.conns = append(r.conns, c)
	r.connMu.Unlock()
	if r.ctx.Err() != nil {
		c.Close()
	}
}

// closer closes the listener and every connection when the run ends.
func (r *run) closer(ln net.Listener) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-r.ctx.Done()
		ln.Close()
		r.connMu.Lock()
		for _, c := range r.conns {
			c.Close()
		}
		r.connMu.Unlock()
	}()
}

// accept serves every connection to ln, each in its own goroutine, until
// the run ends.
func (r *run) accept(ln net.Listener, serve func(net.Conn)) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.track(c)
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				serve(c)
			}()
		}
	}()
}

// credits returns a semaphore holding n credits: tasks a peer may hold.
func credits(n uint32) chan struct{} {
	c := make(chan struct{}, n)
	for range n {
		c <- struct{}{}
	}
	return c
}

func (r *run) window() int {
	if r.cfg.Window > 0 {
		return r.cfg.Window
	}
	return 2
}

func (r *run) used(c, i int) bool { return r.cfg.Use == nil || r.cfg.Use[c] == nil || r.cfg.Use[c][i] }

// Run runs the system of cfg until every task's result is back.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.System.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Tasks < 10 {
		return Result{}, errors.New("need at least 10 tasks")
	}
	if cfg.Use != nil && len(cfg.Use) != len(cfg.System.Clusters) {
		return Result{}, errors.New("selection does not match the clusters")
	}
	r := &run{cfg: cfg, pool: make(chan uint32, cfg.Tasks), seen: make([]bool, cfg.Tasks),
		allDone: make(chan struct{}), nodeTime: map[string]float64{}}
	r.ctx, r.cancel = context.WithCancel(ctx)
	defer r.cancel()
	for i := 0; i < cfg.Tasks; i++ {
		r.pool <- uint32(i)
	}
	close(r.pool)
	used := 0
	for ci, c := range cfg.System.Clusters {
		if cfg.Use != nil && cfg.Use[ci] != nil && len(cfg.Use[ci]) != len(c.Nodes) {
			return Result{}, fmt.Errorf("selection does not match cluster %q", c.Name)
		}
		for i, n := range c.Nodes {
			r.nodeTime[c.Name+"/"+n.Name] = n.TaskTime
			if r.used(ci, i) {
				used++
			}
		}
	}
	if used == 0 {
		return Result{}, errors.New("no node selected")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, err
	}
	r.closer(ln)
	var localLAN *bucket
	inetIn := map[string]*bucket{}
	for _, c := range cfg.System.Clusters {
		if c.Master {
			localLAN = newBucket(c.LAN)
		} else {
			inetIn[c.Name] = newBucket(c.InetIn)
		}
	}
	r.start = time.Now()
	r.accept(ln, func(c net.Conn) { r.serveMaster(c, localLAN, inetIn) })
	for ci, c := range cfg.System.Clusters {
		if c.Master {
			for i, n := range c.Nodes {
				if r.used(ci, i) {
					r.startWorker(ln.Addr().String(), c.Name, n, localLAN)
				}
			}
			continue
		}
		if err := r.startSubMaster(ln.Addr().String(), ci); err != nil {
			r.fail(err)
		}
	}
	select {
	case <-r.allDone:
	case <-r.ctx.Done():
	}
	elapsed := time.Since(r.start)
	r.cancel()
	r.wg.Wait()
	if r.err != nil {
		return Result{}, r.err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return r.measure(elapsed), nil
}

// measure computes the steady-state throughput from the completions.
func (r *run) measure(elapsed time.Duration) Result {
	n := len(r.done)
	res := Result{Tasks: n, Elapsed: elapsed}
	res.From = r.done[n*15/100].at
	res.To = r.done[n*90/100].at
	if pd := time.Duration(r.poolDone.Load()); pd > res.From && pd < res.To {
		res.To = pd
	}
	win := (res.To - res.From).Seconds()
	per := make([]ClusterResult, len(r.cfg.System.Clusters))
	busy := make([]float64, len(per))
	total, totalBusy, totalNodes := 0, 0.0, 0
	for _, d := range r.done {
		if d.at > res.From && d.at <= res.To {
			per[d.cluster].Tasks++
			busy[d.cluster] += d.taskTime
			total++
			totalBusy += d.taskTime
		}
	}
	for ci, c := range r.cfg.System.Clusters {
		per[ci].Name = c.Name
		for i := range c.Nodes {
			if r.used(ci, i) {
				per[ci].Nodes++
			}
		}
		per[ci].Throughput = float64(per[ci].Tasks) / win
		if per[ci].Nodes > 0 {
			per[ci].Efficiency = busy[ci] / (win * float64(per[ci].Nodes))
		}
		totalNodes += per[ci].Nodes
	}
	res.Throughput = float64(total) / win
	res.Efficiency = totalBusy / (win * float64(totalNodes))
	res.Clusters = per
	return res
}

// hello is the first frame of a connection: credit and "cluster/node"
// (a sub-master's node is empty).
func hello(credit int, cluster, node string) frame {
	return frame{kind: kindHello, id: uint32(credit), payload: []byte(cluster + "/" + node)}
}

// serveMaster serves one connection to the master: a worker of the
// master's cluster or a sub-master.
func (r *run) serveMaster(c net.Conn, localLAN *bucket, inetIn map[string]*bucket) {
	h, err := readFrame(c)
	if err != nil || h.kind != kindHello || h.id == 0 {
		if r.ctx.Err() == nil {
			r.fail(fmt.Errorf("master: bad hello: %v", err))
		}
		return
	}
	cluster, node, _ := strings.Cut(string(h.payload), "/")
	ci := -1
	for i, cl := range r.cfg.System.Clusters {
		if cl.Name == cluster {
			ci = i
		}
	}
	if ci < 0 {
		r.fail(fmt.Errorf("master: hello from unknown cluster %q", cluster))
		return
	}
	link := localLAN
	if !r.cfg.System.Clusters[ci].Master {
		link = inetIn[cluster]
	}
	w := limitedConn{Conn: c, link: link}
	credit := credits(min(h.id, 1<<16))
	taskSize := payloadSize(int(r.cfg.System.Task.Size))
	r.wg.Add(1)
	go func() { // sender
		defer r.wg.Done()
		for {
			select {
			case <-credit:
			case <-r.ctx.Done():
				return
			}
			id, ok := <-r.pool
			if !ok {
				return
			}
			if r.taken.Add(1) == int64(r.cfg.Tasks) {
				r.poolDone.Store(int64(time.Since(r.start)))
			}
			if err := writeFrame(w, frame{kind: kindTask, id: id, payload: taskData(id, taskSize)}); err != nil {
				if r.ctx.Err() == nil {
					r.fail(fmt.Errorf("master → %s: %w", cluster, err))
				}
				return
			}
		}
	}()
	for { // receiver
		f, err := readFrame(c)
		if err != nil {
			if r.ctx.Err() == nil {
				r.fail(fmt.Errorf("master ← %s: %w", cluster, err))
			}
			return
		}
		if f.kind != kindResult || int(f.id) >= r.cfg.Tasks || len(f.payload) < 16 {
			r.fail(fmt.Errorf("master ← %s: unexpected frame kind %d id %d", cluster, f.kind, f.id))
			return
		}
		if err := checkResult(f.id, taskSize, f.payload[8:]); err != nil {
			r.fail(err)
			return
		}
		// The result names the node that computed it in its first 8
		// bytes: see startWorker.
		from := string(trimZero(f.payload[:8]))
		if node != "" && from != node {
			r.fail(fmt.Errorf("master ← %s/%s: result from %q", cluster, node, from))
			return
		}
		r.mu.Lock()
		if r.seen[f.id] {
			r.mu.Unlock()
			r.fail(fmt.Errorf("task %d returned twice", f.id))
			return
		}
		r.seen[f.id] = true
		r.done = append(r.done, completion{at: time.Since(r.start), cluster: ci, taskTime: r.nodeTime[cluster+"/"+from]})
		all := len(r.done) == r.cfg.Tasks
		r.mu.Unlock()
		if all {
			close(r.allDone)
		}
		select {
		case credit <- struct{}{}:
		default:
			r.fail(fmt.Errorf("master ← %s: more results than tasks sent", cluster))
			return
		}
	}
}

func trimZero(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// startSubMaster starts the communication manager of sub-cluster ci and
// its workers.
func (r *run) startSubMaster(masterAddr string, ci int) error {
	cl := r.cfg.System.Clusters[ci]
	var nodes []plan.Node
	for i, n := range cl.Nodes {
		if r.used(ci, i) {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil // slashed
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.closer(ln)
	up, err := net.Dial("tcp", masterAddr)
	if err != nil {
		return err
	}
	r.track(up)
	lan := newBucket(cl.LAN)
	out := limitedConn{Conn: up, link: newBucket(cl.InetOut)}
	var outMu sync.Mutex
	if err := writeFrame(out, hello(len(nodes)*r.window()+2, cl.Name, "")); err != nil {
		return err
	}
	queue := make(chan frame, r.cfg.Tasks)
	r.wg.Add(1)
	go func() { // tasks from the master
		defer r.wg.Done()
		for {
			f, err := readFrame(up)
			if err != nil {
				if r.ctx.Err() == nil {
					r.fail(fmt.Errorf("sub-master %s ← master: %w", cl.Name, err))
				}
				return
			}
			queue <- f
		}
	}()
	r.accept(ln, func(c net.Conn) { r.serveSubWorker(c, cl.Name, lan, queue, out, &outMu) })
	for _, n := range nodes {
		r.startWorker(ln.Addr().String(), cl.Name, n, lan)
	}
	return nil
}

// serveSubWorker serves one worker of a sub-cluster: tasks from the queue
// over the LAN, results forwarded to the master over the internet link.
func (r *run) serveSubWorker(c net.Conn, cluster string, lan *bucket, queue chan frame, out limitedConn, outMu *sync.Mutex) {
	h, err := readFrame(c)
	if err != nil || h.kind != kindHello || h.id == 0 {
		if r.ctx.Err() == nil {
			r.fail(fmt.Errorf("sub-master %s: bad hello: %v", cluster, err))
		}
		return
	}
	w := limitedConn{Conn: c, link: lan}
	credit := credits(min(h.id, 1<<16))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			select {
			case <-credit:
			case <-r.ctx.Done():
				return
			}
			var f frame
			select {
			case f = <-queue:
			case <-r.ctx.Done():
				return
			}
			if err := writeFrame(w, f); err != nil {
				if r.ctx.Err() == nil {
					r.fail(fmt.Errorf("sub-master %s → worker: %w", cluster, err))
				}
				return
			}
		}
	}()
	for {
		f, err := readFrame(c)
		if err != nil {
			if r.ctx.Err() == nil {
				r.fail(fmt.Errorf("sub-master %s ← worker: %w", cluster, err))
			}
			return
		}
		outMu.Lock()
		err = writeFrame(out, f)
		outMu.Unlock()
		if err != nil {
			if r.ctx.Err() == nil {
				r.fail(fmt.Errorf("sub-master %s → master: %w", cluster, err))
			}
			return
		}
		credit <- struct{}{}
	}
}

// startWorker starts a worker that connects to addr over the given LAN.
// Its result's payload is the node's name (8 bytes, zero-padded) followed
// by the computed result.
func (r *run) startWorker(addr, cluster string, n plan.Node, lan *bucket) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			r.fail(err)
			return
		}
		r.track(c)
		w := limitedConn{Conn: c, link: lan}
		if err := writeFrame(w, hello(r.window(), cluster, n.Name)); err != nil {
			r.fail(err)
			return
		}
		type arrival struct {
			f  frame
			at time.Time
		}
		tasks := make(chan arrival, r.window())
		results := make(chan frame, r.window())
		r.wg.Add(2)
		go func() { // receives tasks in the background
			defer r.wg.Done()
			defer close(tasks)
			for {
				f, err := readFrame(c)
				if err != nil {
					if r.ctx.Err() == nil {
						r.fail(fmt.Errorf("worker %s/%s: %w", cluster, n.Name, err))
					}
					return
				}
				select {
				case tasks <- arrival{f, time.Now()}:
				case <-r.ctx.Done():
					return
				}
			}
		}()
		go func() { // sends results while the next task computes
			defer r.wg.Done()
			for {
				select {
				case f := <-results:
					if err := writeFrame(w, f); err != nil {
						if r.ctx.Err() == nil {
							r.fail(fmt.Errorf("worker %s/%s: %w", cluster, n.Name, err))
						}
						return
					}
				case <-r.ctx.Done():
					return
				}
			}
		}()
		resultSize := payloadSize(int(r.cfg.System.Task.Result))
		taskTime := time.Duration(n.TaskTime * 1e9)
		var name [8]byte
		copy(name[:], n.Name)
		var end time.Time
		for a := range tasks {
			if a.f.kind != kindTask {
				r.fail(fmt.Errorf("worker %s/%s: unexpected frame kind %d", cluster, n.Name, a.f.kind))
				return
			}
			start := a.at
			if end.After(start) {
				start = end
			}
			res := compute(a.f.payload, max(resultSize-8, 8))
			end = start.Add(taskTime)
			select {
			case <-time.After(time.Until(end)):
			case <-r.ctx.Done():
				return
			}
			select {
			case results <- frame{kind: kindResult, id: a.f.id, payload: append(name[:], res...)}:
			case <-r.ctx.Done():
				return
			}
		}
	}()
}

// comparison is one selection's prediction and measurement.
type comparison struct {
	Selection string          `json:"selection"`
	Predicted plan.Evaluation `json:"predicted"`
	Measured  Result          `json:"measured"`
}

func main() {
	config := flag.String("config", "", "system description (YAML, as for parscope plan)")
	tasks := flag.Int("tasks", 200, "tasks per run")
	thresholds := flag.String("thresholds", "0.9", "efficiency thresholds of the plans to run, comma-separated")
	window := flag.Int("window", 2, "tasks a worker holds at once")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Parse()
	var ths []float64
	for _, f := range strings.Split(*thresholds, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			fmt.Fprintf(os.Stderr, "multicluster: -thresholds: %q is not an efficiency from 0 to 1\n", f)
			os.Exit(2)
		}
		ths = append(ths, v)
	}
	if *config == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: multicluster -config SYSTEM.yaml [-tasks N] [-thresholds T,...] [-json]")
		os.Exit(2)
	}
	sys, err := plan.ReadFile(*config)
	if err == nil {
		var out []comparison
		out, err = compare(context.Background(), sys, ths, *tasks, *window)
		if err == nil {
			if *asJSON {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				err = enc.Encode(out)
			} else {
				printComparison(out)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "multicluster:", err)
		os.Exit(1)
	}
}

// compare runs the system with every node and with the plan's choice at
// each threshold (a choice equal to an earlier one is not run again).
func compare(ctx context.Context, sys plan.System, thresholds []float64, tasks, window int) ([]comparison, error) {
	type selection struct {
		name string
		use  [][]bool
		ev   plan.Evaluation
	}
	all := make([][]bool, len(sys.Clusters))
	for c, cl := range sys.Clusters {
		all[c] = make([]bool, len(cl.Nodes))
		for i := range all[c] {
			all[c][i] = true
		}
	}
	var sels []selection
	seen := map[string]bool{fmt.Sprint(all): true}
	for _, th := range thresholds {
		p, err := plan.Choose(sys, th)
		if err != nil {
			return nil, err
		}
		if len(sels) == 0 {
			sels = append(sels, selection{"all", nil, p.All})
		}
		if key := fmt.Sprint(p.Use); !seen[key] {
			seen[key] = true
			sels = append(sels, selection{fmt.Sprintf("chosen at %g", th), p.Use, p.Chosen})
		}
	}
	var out []comparison
	for _, sel := range sels {
		m, err := Run(ctx, Config{System: sys, Use: sel.use, Tasks: tasks, Window: window})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sel.name, err)
		}
		out = append(out, comparison{sel.name, sel.ev, m})
	}
	return out, nil
}

func printComparison(cs []comparison) {
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SELECTION\tCLUSTER\tNODES\tPREDICTED\tMEASURED\tERROR\tPRED. EFF\tMEAS. EFF")
	for _, c := range cs {
		for i, m := range c.Measured.Clusters {
			p := c.Predicted.Clusters[i]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%s\t%.3f\t%.3f\n", c.Selection, m.Name, m.Nodes, p.PerfSte, m.Throughput, relErr(m.Throughput, p.PerfSte), p.Efficiency, m.Efficiency)
		}
		fmt.Fprintf(tw, "%s\tsystem\t%d\t%.2f\t%.2f\t%s\t%.3f\t%.3f\n", c.Selection, c.Predicted.Nodes, c.Predicted.PerfSte, c.Measured.Throughput, relErr(c.Measured.Throughput, c.Predicted.PerfSte), c.Predicted.Efficiency, c.Measured.Efficiency)
	}
	tw.Flush()
	for _, c := range cs {
		fmt.Printf("%s: %d tasks in %v, steady window %v–%v\n", c.Selection, c.Measured.Tasks, c.Measured.Elapsed.Round(time.Millisecond), c.Measured.From.Round(time.Millisecond), c.Measured.To.Round(time.Millisecond))
	}
}

func relErr(measured, predicted float64) string {
	if predicted == 0 {
		if measured == 0 {
			return "0.0%"
		}
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(measured-predicted)/predicted)
}
