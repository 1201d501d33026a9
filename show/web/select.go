package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/report"
)

// Selection is what a request may ask a trace to be analysed for: the
// processes analysed (Procs, empty for all), the processes left out
// (Exclude) and where the processes' states come from (States), as the
// --procs, --exclude-procs and --states-from flags of parscope serve say
// (report.Options.Procs, ExcludeProcs, States). The lists are sorted and
// hold each process once.
type Selection struct {
	Procs, Exclude []int32
	States         engine.StatesFrom
}

// Builder computes the bundle of one trace for a selection: report.FromStore
// on the trace's open store with the selection's options. ctx ends when the
// server is closed (NewSelectingServer).
type Builder func(ctx context.Context, sel Selection) (*report.Bundle, error)

// MaxSelections is how many bundles of selections a server keeps: the
// most recently asked for.
const MaxSelections = 4

// MaxSelectedProcs bounds the process numbers one list of a selection
// (procs or exclude) may expand to.
const MaxSelectedProcs = 1 << 20

// selectionParams are the query parameters of a selection, in the order
// the error messages list them.
var selectionParams = []string{"procs", "exclude", "states"}

// rangeParams are the parameters of the overview's range query.
var rangeParams = []string{"run", "from", "to", "max"}

// errPanic marks the error of a computation that panicked: a bug, not a
// selection the trace cannot be analysed for.
var errPanic = errors.New("the analysis failed")

// ErrServerClosed is the error of a selection asked for after Close.
var ErrServerClosed = errors.New("web: the server is closed: no selection is computed any more")

// selEntry is one selection's bundle in the cache, or its computation
// under way: done is closed once sv or err is set.
type selEntry struct {
	done chan struct{}
	sv   *served
	err  error
}

// selector recomputes traces for selections and keeps the last few.
type selector struct {
	ctx      context.Context
	cancel   context.CancelFunc
	builders []Builder

	mu      sync.Mutex
	entries map[string]*selEntry
	order   []string // keys of entries, least recently used first

	build  sync.Mutex // one computation at a time; held by Close
	closed bool       // under build
}

// NewSelectingServer is NewServer for traces that can also be analysed
// again for a selection of processes and of the source of states asked for
// by a request (the parameters procs, exclude and states; see ServeHTTP):
// builders[i], when not nil, computes the bundle of trace i for a
// selection. Each selection is computed once, one at a time, and the
// bundles of the MaxSelections selections asked for last are kept. The
// builders are called with a context that ends when ctx does or Close is
// called.
func NewSelectingServer(ctx context.Context, bundles []*report.Bundle, builders []Builder) (*Server, error) {
	if len(builders) != len(bundles) {
		return nil, fmt.Errorf("web: %d builders for %d traces", len(builders), len(bundles))
	}
	s, err := NewServer(bundles)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithCancel(ctx)
	s.sel = &selector{ctx: bctx, cancel: cancel, builders: builders, entries: map[string]*selEntry{}}
	return s, nil
}

// Close cancels the computation of a selection under way, waits for it to
// end and refuses later ones (they answer 503), so that the caller may
// then close the traces' stores. The precomputed answers are still served.
// Close of a server made by NewServer does nothing.
func (s *Server) Close() {
	if s.sel == nil {
		return
	}
	s.sel.cancel()
	s.sel.build.Lock()
	s.sel.closed = true
	s.sel.build.Unlock()
}

// querySelection checks the query q of a request for trace data: every
// parameter is one of selectionParams or of extra, given once. It returns
// the selection asked for and its key (canonical; "" when no selection
// parameter is given or all are empty: the precomputed bundle), or an
// error that is the text of a 400 answer.
func querySelection(q url.Values, extra []string) (Selection, string, error) {
	var unknown []string
	for k, v := range q {
		if !slices.Contains(selectionParams, k) && !slices.Contains(extra, k) {
			unknown = append(unknown, strconv.Quote(k))
			continue
		}
		if len(v) != 1 {
			return Selection{}, "", fmt.Errorf("parameter %q given %d times", k, len(v))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		want := append(slices.Clone(selectionParams), extra...)
		return Selection{}, "", fmt.Errorf("unknown parameter %s (want %s)", strings.Join(unknown, ", "), strings.Join(want, ", "))
	}
	var sel Selection
	var key []string
	for _, p := range []struct {
		name string
		ids  *[]int32
	}{{"procs", &sel.Procs}, {"exclude", &sel.Exclude}} {
		ids, err := engine.ParseIDsAtMost(q.Get(p.name), MaxSelectedProcs)
		if err != nil {
			return Selection{}, "", fmt.Errorf("%s: %v", p.name, err)
		}
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		*p.ids = slices.Compact(ids)
		key = append(key, p.name+"="+idRanges(*p.ids))
	}
	if v := q.Get("states"); v != "" {
		st, err := engine.ParseStatesFrom(v)
		if err != nil {
			return Selection{}, "", fmt.Errorf("states: %v", err)
		}
		sel.States = st
		key = append(key, "states="+string(st))
	}
	return sel, strings.Join(key, "&"), nil
}

// idRanges writes sorted, distinct ids as ParseIDs reads them, with the
// runs of consecutive ids as ranges ("0-7,9").
func idRanges(ids []int32) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ids[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ids[j])))
		}
		i = j + 1
	}
	return b.String()
}

// selected returns trace i analysed for sel (whose canonical key is key),
// computing it unless it is kept or under way, and waiting for it (or for
// ctx, the request's, to end). The status is that of the error answer.
func (s *Server) selected(ctx context.Context, i int, sel Selection, key string) (*served, int, error) {
	c := s.sel
	if c == nil || c.builders[i] == nil {
		return nil, 400, fmt.Errorf("trace %d cannot be analysed again for a selection here: this server serves the analyses computed at its start only", i)
	}
	key = strconv.Itoa(i) + "?" + key
	c.mu.Lock()
	e, kept := c.entries[key]
	if kept {
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	} else {
		e = &selEntry{done: make(chan struct{})}
		c.entries[key] = e
		for len(c.order) >= MaxSelections {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.order = append(c.order, key)
	c.mu.Unlock()
	if !kept {
		go c.compute(i, sel, key, e)
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, 503, ctx.Err()
	}
	if e.err != nil {
		if interrupted(e.err) {
			return nil, 503, e.err
		}
		if errors.Is(e.err, errPanic) {
			return nil, 500, e.err
		}
		// The store is read-only and the analyses deterministic: what
		// fails is the selection on this trace (processes it does not
		// have, states from regions it does not record).
		return nil, 400, fmt.Errorf("trace %d cannot be analysed for %s: %v", i, strings.TrimPrefix(key, strconv.Itoa(i)+"?"), e.err)
	}
	return e.sv, 0, nil
}

// interrupted reports whether err is that of a computation cut short (the
// server closed), not a result of the selection.
func interrupted(err error) bool {
	return errors.Is(err, ErrServerClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// compute builds trace i for sel into e, one computation at a time. A
// failure of the selection is kept as an answer would be; one cut short is
// not (the next request tries again).
func (c *selector) compute(i int, sel Selection, key string, e *selEntry) {
	defer close(e.done)
	defer func() {
		if v := recover(); v != nil {
			e.sv, e.err = nil, fmt.Errorf("%w: %v", errPanic, v)
		}
		if e.err != nil && interrupted(e.err) {
			c.mu.Lock()
			if c.entries[key] == e {
				delete(c.entries, key)
				c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
			}
			c.mu.Unlock()
		}
	}()
	c.build.Lock()
	defer c.build.Unlock()
	if c.closed {
		e.err = ErrServerClosed
		return
	}
	b, err := c.builders[i](c.ctx, sel)
	if err != nil {
		e.err = err
		return
	}
	sv, err := prepare(i, b)
	if err != nil {
		e.err = err
		return
	}
	e.sv = &sv
	// The selection's results are kept; the memory of computing them
	// goes back to the system, as after the server's start.
	debug.FreeOSMemory()
}
