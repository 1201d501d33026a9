// Package plan is the multi-cluster master/worker performance model of
// Strube 2011 (section 4.10, after Argollo's multi-cluster model):
// from each node's time per task (Perf_Avail, which the thesis's probes
// predict), each cluster's LAN and internet throughputs and the task and
// result sizes, it computes the steady performance Perf_Ste of every
// cluster and of the whole system, and chooses which nodes, or which whole
// clusters, to use so that the chosen workers stay busy at least a given
// fraction of the time (the efficiency threshold).
//
// The thesis's equations are
//
//	(4.8)  Perf_Ste   = min( CPerf_Avail,
//	                         Oper * TPut_EC / S_Comm,
//	                         Oper * N * TPut_InetIN  / S_TaskInter,
//	                         Oper * N * TPut_InetOUT / S_ResultInter )
//	(4.9)  CPerf_Avail = Σ_workers Perf_Avail
//	(4.1)  Efficiency  = T_best / T_ex
//
// Every function here works in tasks per second: Perf_Avail = 1/TaskTime
// for a node that takes TaskTime seconds per task. Oper (the basic
// operations of one task) multiplies every term of (4.8) alike, so
// min(Oper·a, Oper·b, ...) = Oper·min(a, b, ...); a System with Task.Oper
// set reports operations per second as PerfSte·Oper, nothing else changes.
//
// How the ambiguous parts of §4.10 are read (docs/multicluster-plan.md says
// the same, with the hand-computed cases):
//
//   - N is "the number of the tasks of this execution" and S_TaskInter "the
//     size of an inter-cluster task". Read as: the communication manager
//     ships tasks to a sub-cluster in packages of N tasks, S_TaskInter bytes
//     each, so N·TPut_InetIN/S_TaskInter is tasks per second over the
//     internet link. With the defaults N = 1, S_TaskInter = S_Task this is
//     TPut_InetIN/S_Task. (Reading N as all the tasks of the run and
//     S_TaskInter as all their bytes gives the same ratio.)
//   - S_ResultInter is described as "the inter-cluster's task size"; read
//     as the size of an inter-cluster result package (N results).
//   - TPut_InetIN is the sub-cluster's incoming internet throughput, which
//     carries tasks; TPut_InetOUT its outgoing one, which carries results.
//   - S_Comm, "the total communication of a task", is S_Task + S_Result by
//     default: the LAN carries the task to the worker and the result back,
//     sharing TPut_EC.
//   - Equation (4.8) is written for an external cluster. The master's own
//     cluster has no internet link: its Perf_Ste is min(CPerf_Avail, LAN
//     term). The system's Perf_Ste is the sum over clusters: the master
//     sees every sub-cluster as one powerful node behind its own link
//     (§2.6), so the clusters do not share a bottleneck in the model.
//   - Efficiency (4.1) is T_best/T_ex, "the time the computing elements are
//     effectively working in proportion to the total execution time"
//     (§2.4). In the steady state a cluster's workers can do CPerf_Avail
//     tasks per second and get Perf_Ste, so its efficiency is
//     Perf_Ste/CPerf_Avail. The threshold applies to every cluster (the
//     thesis "uses only parts of them or slashes clusters entirely"), which
//     makes the whole system's efficiency at least the threshold too.
//   - How the nodes of a cluster are chosen is not spelled out. Choose
//     maximises the cluster's Perf_Ste subject to Perf_Ste/CPerf_Avail ≥
//     threshold; among the subsets that reach it, it takes the most
//     efficient one, then the one with the fewest nodes. A cluster where
//     not even one node meets the threshold is slashed.
//   - A node's contribution is its share of its cluster's Perf_Ste: with
//     the idle time spread over the workers, Perf_Avail·Efficiency.
package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Task is what one task moves over the links, in bytes, and how much work
// it is.
type Task struct {
	// Size is S_Task, the bytes the master sends for one task.
	Size float64 `json:"size_bytes"`
	// Result is S_Result, the bytes a worker sends back for one task.
	Result float64 `json:"result_bytes"`
	// Comm is S_Comm, the total LAN communication of one task; 0 means
	// Size + Result.
	Comm float64 `json:"comm_bytes,omitempty"`
	// Batch is N, the tasks shipped together to a sub-cluster in one
	// inter-cluster package; 0 means 1.
	Batch int `json:"batch,omitempty"`
	// InterTask is S_TaskInter, the bytes of one inter-cluster task package;
	// 0 means Batch·Size.
	InterTask float64 `json:"inter_task_bytes,omitempty"`
	// InterResult is S_ResultInter, the bytes of one inter-cluster result
	// package; 0 means Batch·Result.
	InterResult float64 `json:"inter_result_bytes,omitempty"`
	// Oper is the number of basic operations of one task; 0 means unknown
	// (performance is then reported in tasks per second only).
	Oper float64 `json:"oper,omitempty"`
}

// CommBytes is S_Comm: Comm, or Size + Result when Comm is 0.
func (t Task) CommBytes() float64 {
	if t.Comm > 0 {
		return t.Comm
	}
	return t.Size + t.Result
}

// N is the number of tasks per inter-cluster package (Batch, at least 1).
func (t Task) N() int {
	if t.Batch > 0 {
		return t.Batch
	}
	return 1
}

// InterTaskBytes is S_TaskInter: InterTask, or N·Size when it is 0.
func (t Task) InterTaskBytes() float64 {
	if t.InterTask > 0 {
		return t.InterTask
	}
	return float64(t.N()) * t.Size
}

// InterResultBytes is S_ResultInter: InterResult, or N·Result when it is 0.
func (t Task) InterResultBytes() float64 {
	if t.InterResult > 0 {
		return t.InterResult
	}
	return float64(t.N()) * t.Result
}

// Node is one computing element.
type Node struct {
	Name string `json:"name"`
	// TaskTime is the time, in seconds, the node takes for one task: from
	// a thorough run of a task or from a probe's prediction (eq. 4.7).
	TaskTime float64 `json:"task_time_s"`
	// Source says where TaskTime came from ("task_time", "probe").
	Source string `json:"source,omitempty"`
}

// PerfAvail is the node's available performance in tasks per second,
// 1/TaskTime.
func (n Node) PerfAvail() float64 { return 1 / n.TaskTime }

// Cluster is a set of nodes behind one LAN; a sub-cluster (Master false)
// also has an internet link to the master's cluster.
type Cluster struct {
	Name string `json:"name"`
	// Master marks the cluster where the master runs: it has no internet
	// link.
	Master bool `json:"master,omitempty"`
	// LAN is TPut_EC, the cluster's LAN throughput in bytes per second;
	// 0 means it does not limit.
	LAN float64 `json:"lan_bytes_per_s,omitempty"`
	// InetIn is TPut_InetIN, the sub-cluster's incoming internet throughput
	// (tasks), bytes per second; 0 means it does not limit.
	InetIn float64 `json:"inet_in_bytes_per_s,omitempty"`
	// InetOut is TPut_InetOUT, its outgoing internet throughput (results).
	InetOut float64 `json:"inet_out_bytes_per_s,omitempty"`
	Nodes   []Node  `json:"nodes"`
}

// System is a multi-cluster master/worker system running one application.
type System struct {
	Task     Task      `json:"task"`
	Clusters []Cluster `json:"clusters"`
}

// Validate reports the first impossible value: a non-positive or
// non-finite task time, size or throughput, a cluster without nodes, or
// two master clusters.
func (s System) Validate() error {
	t := s.Task
	if !(t.Size > 0) || math.IsInf(t.Size, 0) || !(t.Result >= 0) || math.IsInf(t.Result, 0) {
		return errors.New("task size must be positive and result size non-negative and finite")
	}
	for _, v := range []float64{t.Comm, t.InterTask, t.InterResult, t.Oper} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return errors.New("task comm, inter_task, inter_result and oper must be non-negative and finite")
		}
	}
	if t.Batch < 0 {
		return errors.New("task batch must be positive")
	}
	if len(s.Clusters) == 0 {
		return errors.New("no clusters")
	}
	masters := 0
	for _, c := range s.Clusters {
		if c.Master {
			masters++
		}
		for _, v := range []float64{c.LAN, c.InetIn, c.InetOut} {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("cluster %q: throughputs must be non-negative and finite", c.Name)
			}
		}
		if c.Master && (c.InetIn > 0 || c.InetOut > 0) {
			return fmt.Errorf("cluster %q: the master's cluster has no internet link", c.Name)
		}
		if len(c.Nodes) == 0 {
			return fmt.Errorf("cluster %q has no nodes", c.Name)
		}
		for _, n := range c.Nodes {
			if !(n.TaskTime > 0) || math.IsInf(n.TaskTime, 0) {
				return fmt.Errorf("cluster %q node %q: task time must be positive and finite", c.Name, n.Name)
			}
		}
	}
	if masters > 1 {
		return errors.New("more than one master cluster")
	}
	return nil
}

// Bounds are the four terms of equation (4.8) for one cluster, in tasks
// per second; +Inf for a link that does not limit.
type Bounds struct {
	// Compute is CPerf_Avail (4.9) over the nodes in use.
	Compute float64 `json:"cperf_avail"`
	// LAN is TPut_EC/S_Comm.
	LAN float64 `json:"lan"`
	// InetIn is N·TPut_InetIN/S_TaskInter.
	InetIn float64 `json:"inet_in"`
	// InetOut is N·TPut_InetOUT/S_ResultInter.
	InetOut float64 `json:"inet_out"`
}

// Network is the smallest of the three network terms: the most tasks per
// second the cluster's links can carry.
func (b Bounds) Network() float64 { return math.Min(b.LAN, math.Min(b.InetIn, b.InetOut)) }

// Steady is Perf_Ste, equation (4.8): the smallest of the four terms.
func (b Bounds) Steady() float64 { return math.Min(b.Compute, b.Network()) }

// Limit names the term that sets Perf_Ste: "compute", "lan", "inet_in" or
// "inet_out"; terms that tie (within a relative 1e-9) are all named,
// joined by "=" in that order ("compute=inet_in").
func (b Bounds) Limit() string {
	s := b.Steady()
	var names []string
	for _, t := range []struct {
		name string
		v    float64
	}{{"compute", b.Compute}, {"lan", b.LAN}, {"inet_in", b.InetIn}, {"inet_out", b.InetOut}} {
		if closeTo(t.v, s) {
			names = append(names, t.name)
		}
	}
	return strings.Join(names, "=")
}

// rate is throughput/size in tasks per second, +Inf when the link does not
// limit (throughput 0) or nothing crosses it (size 0).
func rate(tasks, throughput, size float64) float64 {
	if throughput <= 0 || size <= 0 {
		return math.Inf(1)
	}
	return tasks * throughput / size
}

// NetworkBounds returns the network terms of (4.8) for cluster c, with
// Compute 0: TPut_EC/S_Comm, N·TPut_InetIN/S_TaskInter and
// N·TPut_InetOUT/S_ResultInter. The master's cluster only has the LAN term.
func NetworkBounds(c Cluster, t Task) Bounds {
	b := Bounds{LAN: rate(1, c.LAN, t.CommBytes()), InetIn: math.Inf(1), InetOut: math.Inf(1)}
	if !c.Master {
		n := float64(t.N())
		b.InetIn = rate(n, c.InetIn, t.InterTaskBytes())
		b.InetOut = rate(n, c.InetOut, t.InterResultBytes())
	}
	return b
}

// CPerfAvail is equation (4.9): the sum of Perf_Avail over the nodes whose
// use flag is set (every node when use is nil).
func CPerfAvail(nodes []Node, use []bool) float64 {
	var s float64
	for i, n := range nodes {
		if use == nil || use[i] {
			s += n.PerfAvail()
		}
	}
	return s
}

// NodePerf is one node in an Evaluation.
type NodePerf struct {
	Name      string  `json:"name"`
	TaskTime  float64 `json:"task_time_s"`
	Source    string  `json:"source,omitempty"`
	PerfAvail float64 `json:"perf_avail"`
	Used      bool    `json:"used"`
	// Contribution is the node's share of its cluster's Perf_Ste,
	// PerfAvail·Efficiency of the cluster (0 when not used).
	Contribution float64 `json:"contribution"`
}

// ClusterPerf is one cluster in an Evaluation: the terms of (4.8) over
// the nodes in use, Perf_Ste and the efficiency Perf_Ste/CPerf_Avail.
type ClusterPerf struct {
	Name   string `json:"name"`
	Master bool   `json:"master,omitempty"`
	Bounds Bounds `json:"bounds"`
	// PerfSte is the cluster's steady performance, tasks per second.
	PerfSte float64 `json:"perf_ste"`
	// Limit names the term of (4.8) that sets PerfSte.
	Limit string `json:"limit"`
	// Efficiency is PerfSte/CPerf_Avail, the fraction of the time the used
	// nodes work; 0 when no node is used.
	Efficiency float64 `json:"efficiency"`
	// Used is the number of nodes in use; 0 means the cluster is slashed.
	Used  int        `json:"used"`
	Nodes []NodePerf `json:"nodes"`
}

// Evaluation is the steady performance of a System with some nodes in use.
type Evaluation struct {
	Clusters []ClusterPerf `json:"clusters"`
	// CPerfAvail is the sum of Perf_Avail over every node in use.
	CPerfAvail float64 `json:"cperf_avail"`
	// PerfSte is the system's steady performance, the sum of the clusters',
	// in tasks per second.
	PerfSte float64 `json:"perf_ste"`
	// Efficiency is PerfSte/CPerfAvail (0 when nothing is used).
	Efficiency float64 `json:"efficiency"`
	// Nodes is the number of nodes in use.
	Nodes int `json:"nodes"`
}

// Evaluate computes Perf_Ste of every cluster and of the system with the
// nodes use[c][i] in use (every node when use is nil; every node of
// cluster c when use[c] is nil).
func Evaluate(s System, use [][]bool) (Evaluation, error) {
	if err := s.Validate(); err != nil {
		return Evaluation{}, err
	}
	if use != nil && len(use) != len(s.Clusters) {
		return Evaluation{}, fmt.Errorf("selection has %d clusters, system %d", len(use), len(s.Clusters))
	}
	var ev Evaluation
	for ci, c := range s.Clusters {
		var u []bool
		if use != nil {
			u = use[ci]
		}
		if u != nil && len(u) != len(c.Nodes) {
			return Evaluation{}, fmt.Errorf("selection has %d nodes for cluster %q, which has %d", len(u), c.Name, len(c.Nodes))
		}
		cp := evaluateCluster(c, s.Task, u)
		ev.Clusters = append(ev.Clusters, cp)
		ev.CPerfAvail += cp.Bounds.Compute
		ev.PerfSte += cp.PerfSte
		ev.Nodes += cp.Used
	}
	if ev.CPerfAvail > 0 {
		ev.Efficiency = ev.PerfSte / ev.CPerfAvail
	}
	return ev, nil
}

func evaluateCluster(c Cluster, t Task, use []bool) ClusterPerf {
	b := NetworkBounds(c, t)
	b.Compute = CPerfAvail(c.Nodes, use)
	cp := ClusterPerf{Name: c.Name, Master: c.Master, Bounds: b, PerfSte: b.Steady(), Limit: b.Limit()}
	if b.Compute > 0 {
		cp.Efficiency = cp.PerfSte / b.Compute
	}
	for i, n := range c.Nodes {
		np := NodePerf{Name: n.Name, TaskTime: n.TaskTime, Source: n.Source, PerfAvail: n.PerfAvail(), Used: use == nil || use[i]}
		if np.Used {
			cp.Used++
			np.Contribution = np.PerfAvail * cp.Efficiency
		}
		cp.Nodes = append(cp.Nodes, np)
	}
	return cp
}
