package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/probe"
)

// Error is a problem in a system description, located by file, line and
// column (1-based; 0 when unknown), with the path of the field it is in
// (e.g. "clusters[1].nodes[0].task_time").
type Error struct {
	File   string
	Line   int
	Column int
	Field  string
	Msg    string
}

// Error formats the location, the field and the message.
func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
		if e.Column > 0 {
			loc += ":" + strconv.Itoa(e.Column)
		}
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return loc + ": " + e.Msg
}

// ReadFile reads a system description from a YAML file (see Read).
func ReadFile(path string) (System, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return System{}, err
	}
	return Read(bytes.NewReader(data), path)
}

// MaxInput is the largest description Read accepts, in bytes.
const MaxInput = 16 << 20

// Read reads a system description in YAML; name is the file name used in
// errors. The format (docs/multicluster-plan.md):
//
//	task:
//	  size: 8KiB            # S_Task (bytes, or with B, kB, KiB, MB, MiB, GB, GiB, kbit, Mbit...)
//	  result: 1KiB          # S_Result
//	  comm: 9KiB            # optional S_Comm (default size+result)
//	  batch: 1              # optional N, tasks per inter-cluster package
//	  inter_task: 8KiB      # optional S_TaskInter (default batch·size)
//	  inter_result: 1KiB    # optional S_ResultInter (default batch·result)
//	  oper: 2e9             # optional basic operations per task
//	clusters:
//	  - name: local
//	    master: true        # the master's cluster: no internet link
//	    lan: 100Mbit/s      # TPut_EC (optional: omitted does not limit)
//	    nodes:
//	      - {name: a, task_time: 50ms}          # a duration, or seconds
//	      - {name: b, task_time: 0.1, count: 4} # four nodes b/1..b/4
//	  - name: remote
//	    lan: 1GB/s
//	    inet_in: 80KiB/s    # TPut_InetIN (required for a sub-cluster)
//	    inet_out: 80KiB/s   # TPut_InetOUT (required for a sub-cluster)
//	    nodes:
//	      - {name: d, probe: d.prediction.json} # parscope probe run --json
//	      - name: c
//	        probe:          # task time from a probe's numbers, eq. 4.7
//	          et_ref: 120s
//	          et_uninst_ref: 100s
//	          phases:
//	            - {weight: 0.5, t_phase_ref: 3s, t_probed: 1.5s}
//
// Throughputs are sizes per second ("80KiB/s", "100Mbit/s", "1Gbps") or
// plain numbers of bytes per second. Unknown fields, missing required
// fields and impossible values are errors naming the file, the line and
// column, and the field expected.
func Read(r io.Reader, name string) (System, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return System{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxInput {
		return System{}, &Error{File: name, Msg: fmt.Sprintf("larger than %d bytes", MaxInput)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return System{}, yamlError(name, err)
	}
	rd := &reader{file: name}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return System{}, &Error{File: name, Line: 1, Msg: "empty; expected a mapping with fields task and clusters"}
	}
	s, err := rd.system(doc.Content[0])
	if err != nil {
		return System{}, err
	}
	if err := s.Validate(); err != nil { // every value was checked on reading: a guard
		return System{}, &Error{File: name, Msg: err.Error()}
	}
	return s, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML syntax error into a located Error.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: "YAML syntax: " + m[2]}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

type reader struct {
	file  string
	nodes int // nodes read so far, at most MaxNodes
}

func (rd *reader) errf(n *yaml.Node, field, format string, args ...any) error {
	return &Error{File: rd.file, Line: n.Line, Column: n.Column, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fields checks that n is a mapping with only the allowed keys and returns
// the values by key, with the key nodes for locating duplicates.
func (rd *reader) fields(n *yaml.Node, path string, allowed ...string) (map[string]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, rd.errf(n, path, "expected a mapping with fields %s", strings.Join(allowed, ", "))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, rd.errf(k, path, "expected a field name")
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k.Value
		}
		if !ok {
			return nil, rd.errf(k, join(path, format.Excerpt([]byte(k.Value))), "unknown field; expected one of %s", strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, rd.errf(k, join(path, format.Excerpt([]byte(k.Value))), "given twice")
		}
		out[k.Value] = v
	}
	return out, nil
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func (rd *reader) scalar(n *yaml.Node, path, what string) (string, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", rd.errf(n, path, "expected %s", what)
	}
	return n.Value, nil
}

func (rd *reader) system(root *yaml.Node) (System, error) {
	f, err := rd.fields(root, "", "task", "clusters")
	if err != nil {
		return System{}, err
	}
	var s System
	tn, ok := f["task"]
	if !ok {
		return System{}, rd.errf(root, "", "missing field task (task sizes: size, result)")
	}
	if s.Task, err = rd.task(tn); err != nil {
		return System{}, err
	}
	cn, ok := f["clusters"]
	if !ok {
		return System{}, rd.errf(root, "", "missing field clusters (a list of clusters)")
	}
	cn = deref(cn)
	if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
		return System{}, rd.errf(cn, "clusters", "expected a non-empty list of clusters")
	}
	names := map[string]int{}
	master := ""
	for i, c := range cn.Content {
		path := fmt.Sprintf("clusters[%d]", i)
		cl, err := rd.cluster(c, path)
		if err != nil {
			return System{}, err
		}
		if prev, dup := names[cl.Name]; dup {
			return System{}, rd.errf(c, path+".name", "cluster %q already defined as clusters[%d]", format.Excerpt([]byte(cl.Name)), prev)
		}
		names[cl.Name] = i
		if cl.Master {
			if master != "" {
				return System{}, rd.errf(c, path+".master", "cluster %q is the master's cluster already; expected at most one master: true", format.Excerpt([]byte(master)))
			}
			master = cl.Name
		}
		s.Clusters = append(s.Clusters, cl)
	}
	return s, nil
}

func (rd *reader) task(n *yaml.Node) (Task, error) {
	f, err := rd.fields(n, "task", "size", "result", "comm", "batch", "inter_task", "inter_result", "oper")
	if err != nil {
		return Task{}, err
	}
	var t Task
	if _, ok := f["size"]; !ok {
		return Task{}, rd.errf(deref(n), "task", "missing field size (S_Task, e.g. 8KiB)")
	}
	if _, ok := f["result"]; !ok {
		return Task{}, rd.errf(deref(n), "task", "missing field result (S_Result, e.g. 1KiB)")
	}
	sizes := []struct {
		key      string
		dst      *float64
		positive bool
	}{{"size", &t.Size, true}, {"result", &t.Result, false}, {"comm", &t.Comm, true},
		{"inter_task", &t.InterTask, true}, {"inter_result", &t.InterResult, true}}
	for _, sz := range sizes {
		v, ok := f[sz.key]
		if !ok {
			continue
		}
		if *sz.dst, err = rd.quantity(v, "task."+sz.key, false, sz.positive); err != nil {
			return Task{}, err
		}
	}
	if v, ok := f["batch"]; ok {
		s, err := rd.scalar(v, "task.batch", "a positive integer (N, tasks per inter-cluster package)")
		if err != nil {
			return Task{}, err
		}
		b, err := strconv.Atoi(s)
		if err != nil || b < 1 {
			return Task{}, rd.errf(deref(v), "task.batch", "expected a positive integer (N, tasks per inter-cluster package), got %q", format.Excerpt([]byte(s)))
		}
		t.Batch = b
	}
	if v, ok := f["oper"]; ok {
		if t.Oper, err = rd.number(v, "task.oper", "a positive number of basic operations per task"); err != nil {
			return Task{}, err
		}
	}
	return t, nil
}

func (rd *reader) cluster(n *yaml.Node, path string) (Cluster, error) {
	f, err := rd.fields(n, path, "name", "master", "lan", "inet_in", "inet_out", "nodes")
	if err != nil {
		return Cluster{}, err
	}
	n = deref(n)
	var c Cluster
	nn, ok := f["name"]
	if !ok {
		return Cluster{}, rd.errf(n, path, "missing field name")
	}
	if c.Name, err = rd.scalar(nn, path+".name", "a cluster name"); err != nil {
		return Cluster{}, err
	}
	if c.Name == "" {
		return Cluster{}, rd.errf(deref(nn), path+".name", "expected a non-empty cluster name")
	}
	if v, ok := f["master"]; ok {
		s, err := rd.scalar(v, path+".master", "true or false")
		if err != nil {
			return Cluster{}, err
		}
		if c.Master, err = strconv.ParseBool(s); err != nil {
			return Cluster{}, rd.errf(deref(v), path+".master", "expected true or false, got %q", format.Excerpt([]byte(s)))
		}
	}
	for _, l := range []struct {
		key string
		dst *float64
	}{{"lan", &c.LAN}, {"inet_in", &c.InetIn}, {"inet_out", &c.InetOut}} {
		v, ok := f[l.key]
		if !ok {
			if !c.Master && l.key != "lan" {
				return Cluster{}, rd.errf(n, path, "missing field %s (the sub-cluster's internet throughput, e.g. 1Mbit/s)", l.key)
			}
			continue
		}
		if c.Master && l.key != "lan" {
			return Cluster{}, rd.errf(deref(v), join(path, l.key), "the master's cluster has no internet link; expected only lan")
		}
		if *l.dst, err = rd.quantity(v, join(path, l.key), true, true); err != nil {
			return Cluster{}, err
		}
	}
	nl, ok := f["nodes"]
	if !ok {
		return Cluster{}, rd.errf(n, path, "missing field nodes (a list of nodes)")
	}
	nl = deref(nl)
	if nl.Kind != yaml.SequenceNode || len(nl.Content) == 0 {
		return Cluster{}, rd.errf(nl, path+".nodes", "expected a non-empty list of nodes")
	}
	seen := map[string]bool{}
	for i, nd := range nl.Content {
		np := fmt.Sprintf("%s.nodes[%d]", path, i)
		nodes, err := rd.node(nd, np)
		if err != nil {
			return Cluster{}, err
		}
		for _, x := range nodes {
			if seen[x.Name] {
				return Cluster{}, rd.errf(deref(nd), np+".name", "node %q appears twice in cluster %q", format.Excerpt([]byte(x.Name)), format.Excerpt([]byte(c.Name)))
			}
			seen[x.Name] = true
		}
		c.Nodes = append(c.Nodes, nodes...)
	}
	return c, nil
}

// MaxCount is the largest count of identical nodes one entry may give.
const MaxCount = 100000

// MaxNodes is the most nodes a description may give in all.
const MaxNodes = 1000000

func (rd *reader) node(n *yaml.Node, path string) ([]Node, error) {
	f, err := rd.fields(n, path, "name", "task_time", "probe", "count")
	if err != nil {
		return nil, err
	}
	n = deref(n)
	var x Node
	nn, ok := f["name"]
	if !ok {
		return nil, rd.errf(n, path, "missing field name")
	}
	if x.Name, err = rd.scalar(nn, path+".name", "a node name"); err != nil {
		return nil, err
	}
	if x.Name == "" {
		return nil, rd.errf(deref(nn), path+".name", "expected a non-empty node name")
	}
	tt, hasTime := f["task_time"]
	pr, hasProbe := f["probe"]
	switch {
	case hasTime && hasProbe:
		return nil, rd.errf(deref(pr), path+".probe", "expected either task_time or probe, not both")
	case hasTime:
		if x.TaskTime, err = rd.duration(tt, path+".task_time"); err != nil {
			return nil, err
		}
		x.Source = "task_time"
	case hasProbe:
		if x.TaskTime, x.Source, err = rd.probe(pr, path+".probe"); err != nil {
			return nil, err
		}
	default:
		return nil, rd.errf(n, path, "missing field task_time (seconds per task, e.g. 250ms) or probe")
	}
	count := 1
	if v, ok := f["count"]; ok {
		s, err := rd.scalar(v, path+".count", "a positive integer")
		if err != nil {
			return nil, err
		}
		count, err = strconv.Atoi(s)
		if err != nil || count < 1 || count > MaxCount {
			return nil, rd.errf(deref(v), path+".count", "expected an integer from 1 to %d, got %q", MaxCount, format.Excerpt([]byte(s)))
		}
	}
	if rd.nodes += count; rd.nodes > MaxNodes {
		return nil, rd.errf(n, path, "more than %d nodes in all", MaxNodes)
	}
	if count == 1 {
		return []Node{x}, nil
	}
	out := make([]Node, count)
	for i := range out {
		out[i] = x
		out[i].Name = fmt.Sprintf("%s/%d", x.Name, i+1)
	}
	return out, nil
}

// probe reads a node's probe: the file a `parscope probe run --json` wrote
// (a path relative to the description's folder), whose predicted_s is the
// task time, or the numbers of equation (4.7) inline.
func (rd *reader) probe(n *yaml.Node, path string) (float64, string, error) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		return rd.probeFile(n, path)
	}
	f, err := rd.fields(n, path, "et_ref", "et_uninst_ref", "phases")
	if err != nil {
		return 0, "", err
	}
	var etRef, etUninst float64
	for _, k := range []struct {
		key string
		dst *float64
	}{{"et_ref", &etRef}, {"et_uninst_ref", &etUninst}} {
		v, ok := f[k.key]
		if !ok {
			return 0, "", rd.errf(n, path, "missing field %s (a duration)", k.key)
		}
		if *k.dst, err = rd.duration(v, join(path, k.key)); err != nil {
			return 0, "", err
		}
	}
	pl, ok := f["phases"]
	if !ok {
		return 0, "", rd.errf(n, path, "missing field phases (a list of weight, t_phase_ref, t_probed)")
	}
	pl = deref(pl)
	if pl.Kind != yaml.SequenceNode || len(pl.Content) == 0 {
		return 0, "", rd.errf(pl, path+".phases", "expected a non-empty list of phases")
	}
	var phases []probe.PhaseTerm
	for i, p := range pl.Content {
		pp := fmt.Sprintf("%s.phases[%d]", path, i)
		pf, err := rd.fields(p, pp, "weight", "t_phase_ref", "t_probed")
		if err != nil {
			return 0, "", err
		}
		var ph probe.PhaseTerm
		for _, k := range []string{"weight", "t_phase_ref", "t_probed"} {
			v, ok := pf[k]
			if !ok {
				return 0, "", rd.errf(deref(p), pp, "missing field %s", k)
			}
			switch k {
			case "weight":
				ph.Weight, err = rd.number(v, pp+".weight", "a weight in (0, 1]")
				if err == nil && ph.Weight > 1 {
					err = rd.errf(deref(v), pp+".weight", "expected a weight in (0, 1], got %v", ph.Weight)
				}
			case "t_phase_ref":
				ph.TPhaseRef, err = rd.duration(v, pp+"."+k)
			default:
				ph.TProbed, err = rd.duration(v, pp+"."+k)
			}
			if err != nil {
				return 0, "", err
			}
		}
		phases = append(phases, ph)
	}
	t, err := probe.ETPredicted(etRef, etUninst, phases)
	if err != nil {
		return 0, "", rd.errf(n, path, "%v", err)
	}
	if !(t > 0) || math.IsInf(t, 0) {
		return 0, "", rd.errf(n, path, "the predicted task time %v is not a positive finite number", t)
	}
	return t, "probe", nil
}

// probeFile reads the prediction a `parscope probe run --json` wrote.
func (rd *reader) probeFile(n *yaml.Node, path string) (float64, string, error) {
	const what = "the file of a `parscope probe run --json` (predicted_s) or a mapping with et_ref, et_uninst_ref, phases"
	if n.Tag == "!!null" || n.Value == "" {
		return 0, "", rd.errf(n, path, "expected %s", what)
	}
	file := n.Value
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(rd.file), file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, "", rd.errf(n, path, "%v", err)
	}
	var pred probe.Prediction
	if err := json.Unmarshal(data, &pred); err != nil {
		return 0, "", rd.errf(n, path, "%s: %v; expected %s", file, err, what)
	}
	if !(pred.Predicted > 0) || math.IsInf(pred.Predicted, 0) {
		return 0, "", rd.errf(n, path, "%s: predicted_s %v is not a positive time", file, pred.Predicted)
	}
	src := "probe " + filepath.Base(file)
	if pred.Covered > 0 && pred.Covered < 1 {
		src += fmt.Sprintf(" (covers %.0f%%)", 100*pred.Covered)
	}
	return pred.Predicted, src, nil
}

// number reads a positive finite number.
func (rd *reader) number(n *yaml.Node, path, what string) (float64, error) {
	s, err := rd.scalar(n, path, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, rd.errf(deref(n), path, "expected %s, got %q", what, format.Excerpt([]byte(s)))
	}
	return v, nil
}

// duration reads a positive duration: a Go duration ("250ms", "1m30s") or
// a number of seconds.
func (rd *reader) duration(n *yaml.Node, path string) (float64, error) {
	const what = "a positive duration (250ms, 1.5s, or a number of seconds)"
	s, err := rd.scalar(n, path, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return 0, rd.errf(deref(n), path, "expected %s, got %q", what, format.Excerpt([]byte(s)))
		}
		v = d.Seconds()
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, rd.errf(deref(n), path, "expected %s, got %q", what, format.Excerpt([]byte(s)))
	}
	return v, nil
}

// quantity reads a size (bytes) or, with perSecond, a throughput (bytes
// per second).
func (rd *reader) quantity(n *yaml.Node, path string, perSecond, positive bool) (float64, error) {
	what := "a size (8KiB, 1MB, 4096)"
	if perSecond {
		what = "a throughput (80KiB/s, 100Mbit/s, 1Gbps, or bytes per second)"
	}
	s, err := rd.scalar(n, path, what)
	if err != nil {
		return 0, err
	}
	v, err := ParseQuantity(s, perSecond)
	if err != nil || (positive && v == 0) {
		return 0, rd.errf(deref(n), path, "expected %s, got %q", what, format.Excerpt([]byte(s)))
	}
	return v, nil
}

// units are the size suffixes ParseQuantity knows, in bytes.
var units = map[string]float64{
	"": 1, "B": 1,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"bit": 1.0 / 8, "kbit": 1e3 / 8, "Kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8,
}

// bpsUnits are throughput suffixes that already mean "per second",
// longest first.
var bpsUnits = []struct {
	suffix string
	bytes  float64
}{{"kbps", 1e3 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"bps", 1.0 / 8}}

// ParseQuantity parses a size in bytes ("8KiB", "1.5MB", "512", "64kbit")
// or, with perSecond, a throughput in bytes per second ("80KiB/s",
// "100Mbit/s", "1Gbps", "125000"). kB, MB, GB are powers of 1000, KiB,
// MiB, GiB powers of 1024, and bit units are divided by 8. The result is
// finite and not negative.
func ParseQuantity(s string, perSecond bool) (float64, error) {
	str := strings.TrimSpace(s)
	unit := 0.0
	if perSecond {
		for _, b := range bpsUnits {
			if rest, ok := strings.CutSuffix(str, b.suffix); ok {
				str, unit = strings.TrimSpace(rest), b.bytes
				break
			}
		}
		if unit == 0 {
			if rest, ok := strings.CutSuffix(str, "/s"); ok {
				str = rest
			} else if _, err := strconv.ParseFloat(str, 64); err != nil {
				return 0, fmt.Errorf("throughput %q: expected a size per second (80KiB/s, 100Mbit/s, 1Gbps)", format.Excerpt([]byte(s)))
			}
		}
	}
	if unit == 0 {
		i := len(str)
		for i > 0 && (str[i-1] >= 'a' && str[i-1] <= 'z' || str[i-1] >= 'A' && str[i-1] <= 'Z') {
			i--
		}
		u, ok := units[str[i:]]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q", format.Excerpt([]byte(s)), format.Excerpt([]byte(str[i:])))
		}
		str, unit = strings.TrimSpace(str[:i]), u
	}
	v, err := strconv.ParseFloat(str, 64)
	if err != nil || str == "" || strings.ContainsAny(str, "xXpP_") {
		return 0, fmt.Errorf("%q: expected a number", format.Excerpt([]byte(s)))
	}
	v *= unit
	if !(v >= 0) || math.IsInf(v, 0) {
		return 0, errors.New("value out of range: " + s)
	}
	return v, nil
}
