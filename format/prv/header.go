package prv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
)

// header is the parsed first line of a .prv file.
type header struct {
	date   string // "26/01/04 at 16:35", without the parentheses
	ftime  int64  // the trace's end in its own unit
	ns     bool   // ftime carried the "_ns" suffix
	nodes  []int  // CPUs per node (nil when the header gives only a count)
	nnodes int
	appls  []appl
	comms  int // declared number of communicators (-1 if absent)
}

// appl is one application: the threads and node of each task.
type appl struct {
	threads []int // per task
	node    []int // per task (1-based; 0 when unknown)
}

// maxThreads bounds the processes a header may declare, so that a corrupt
// header cannot make the importer allocate without limit.
const maxThreads = 1 << 22

// parseHeader parses "#Paraver (date):ftime[_ns]:nodes:nAppl:applList[,nComms]".
func parseHeader(line string) (*header, error) {
	rest, ok := strings.CutPrefix(line, "#Paraver")
	if !ok {
		return nil, fmt.Errorf("expected the header \"#Paraver (date):ftime:nodes:applications\", got %q", format.Excerpt([]byte(line)))
	}
	rest = strings.TrimLeft(rest, " ")
	h := &header{comms: -1}
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return nil, fmt.Errorf("header: the date has no closing parenthesis")
		}
		h.date, rest = rest[1:end], rest[end+1:]
	}
	rest, ok = strings.CutPrefix(rest, ":")
	if !ok {
		return nil, fmt.Errorf("header: expected ':' after the date")
	}
	c := &cursor{s: rest}
	ft := c.until(":")
	if t, ok := strings.CutSuffix(ft, "_ns"); ok {
		ft, h.ns = t, true
	}
	v, err := strconv.ParseInt(ft, 10, 64)
	if err != nil || v < 0 {
		return nil, fmt.Errorf("header: expected the trace duration (an integer, optionally with _ns), got %q", format.Excerpt([]byte(ft)))
	}
	h.ftime = v
	if !c.eat(':') {
		return nil, fmt.Errorf("header: expected ':' after the duration")
	}
	// Resources: "n" or "n(cpus,cpus,...)".
	n, err := c.int()
	if err != nil {
		return nil, fmt.Errorf("header: expected the number of nodes: %w", err)
	}
	h.nnodes = n
	if c.eat('(') {
		for i := 0; i < n; i++ {
			cpus, err := c.int()
			if err != nil {
				return nil, fmt.Errorf("header: expected the CPUs of node %d: %w", i+1, err)
			}
			h.nodes = append(h.nodes, cpus)
			if i < n-1 && !c.eat(',') {
				return nil, fmt.Errorf("header: expected ',' between the CPU counts of the nodes")
			}
		}
		if !c.eat(')') {
			return nil, fmt.Errorf("header: expected ')' after the CPU counts of the %d nodes", n)
		}
	}
	if !c.eat(':') {
		return nil, fmt.Errorf("header: expected ':' after the resources")
	}
	na, err := c.int()
	if err != nil || na <= 0 {
		return nil, fmt.Errorf("header: expected the number of applications (at least 1)")
	}
	if !c.eat(':') {
		return nil, fmt.Errorf("header: expected ':' after the number of applications")
	}
	total := 0
	for a := 0; a < na; a++ {
		nt, err := c.int()
		if err != nil || nt <= 0 {
			return nil, fmt.Errorf("header: expected the number of tasks of application %d", a+1)
		}
		if !c.eat('(') {
			return nil, fmt.Errorf("header: expected '(' after the number of tasks of application %d", a+1)
		}
		var ap appl
		for t := 0; t < nt; t++ {
			th, err := c.int()
			if err != nil || th <= 0 {
				return nil, fmt.Errorf("header: expected the threads of task %d of application %d", t+1, a+1)
			}
			if !c.eat(':') {
				return nil, fmt.Errorf("header: expected \"threads:node\" for task %d of application %d", t+1, a+1)
			}
			node, err := c.int()
			if err != nil {
				return nil, fmt.Errorf("header: expected the node of task %d of application %d", t+1, a+1)
			}
			total += th
			if total > maxThreads {
				return nil, fmt.Errorf("header: more than %d threads", maxThreads)
			}
			ap.threads = append(ap.threads, th)
			ap.node = append(ap.node, node)
			sep := byte(',')
			if t == nt-1 {
				sep = ')'
			}
			if !c.eat(sep) {
				return nil, fmt.Errorf("header: expected '%c' after task %d of application %d", sep, t+1, a+1)
			}
		}
		h.appls = append(h.appls, ap)
		if a < na-1 && !c.eat(':') && !c.eat(',') {
			return nil, fmt.Errorf("header: expected ':' or ',' after application %d", a+1)
		}
	}
	if c.eat(',') || c.eat(':') {
		if nc, err := c.int(); err == nil {
			h.comms = nc
		}
	}
	return h, nil
}

// cursor scans a header string.
type cursor struct {
	s string
	i int
}

func (c *cursor) eat(b byte) bool {
	if c.i < len(c.s) && c.s[c.i] == b {
		c.i++
		return true
	}
	return false
}

func (c *cursor) until(stop string) string {
	j := c.i
	for j < len(c.s) && !strings.ContainsRune(stop, rune(c.s[j])) {
		j++
	}
	s := c.s[c.i:j]
	c.i = j
	return s
}

func (c *cursor) int() (int, error) {
	j := c.i
	for j < len(c.s) && c.s[j] >= '0' && c.s[j] <= '9' {
		j++
	}
	if j == c.i {
		return 0, fmt.Errorf("no number at %q", format.Excerpt([]byte(c.s[c.i:])))
	}
	v, err := strconv.Atoi(c.s[c.i:j])
	if err != nil {
		return 0, err
	}
	c.i = j
	return v, nil
}
