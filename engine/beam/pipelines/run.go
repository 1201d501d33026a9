package pipelines

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	// The runners parscope-beam offers.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"

	"github.com/parscope/parscope/engine"
)

// Runners lists the runners a pipeline can run on.
var Runners = []string{"prism", "flink", "spark", "dataflow"}

// A pipeline runs an engine analysis over the parts of its plan: every
// part's accumulator is fed on a worker (engine.Prepared.Feed over
// engine.Restrict of the part), encoded (engine.Portable), and the
// accumulators are merged on one worker, in the order of the parts when
// the plan is Ordered (by run), combined as they come otherwise (by
// process); the merge then either asks for another pass over every part
// (a round: the merged accumulator, encoded, is every part's start) or
// ends with the result in the engine's envelope, written as `parscope
// ANALYSIS --json` writes it.

func init() {
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(int, []byte), error](&partFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func([]byte), error](&foldFn{})
	register.DoFn3x1[context.Context, []byte, func([]byte), error](&finishFn{})
	register.Combiner3[[]byte, []byte, []byte](&mergeFn{})
	register.Emitter1[[]byte]()
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
}

// partOutput is what a part sends to the merge: its index in the plan and
// its encoded accumulator.
type partOutput struct {
	Index int
	Data  []byte
}

func encodePart(o partOutput) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(o)
	return buf.Bytes(), err
}

func decodePart(data []byte) (partOutput, error) {
	var o partOutput
	err := gob.NewDecoder(bytes.NewReader(data)).Decode(&o)
	return o, err
}

// workers caches, in a worker process, the trace and prepared request of
// each pipeline it runs steps of (bundles of one pipeline share them).
var workers = struct {
	sync.Mutex
	m map[string]*opened
}{m: map[string]*opened{}}

// prepared returns cfg's opened trace and prepared request on a worker.
func prepared(ctx context.Context, cfg Config) (*opened, error) {
	key, err := gobKey(cfg)
	if err != nil {
		return nil, err
	}
	workers.Lock()
	defer workers.Unlock()
	if o, ok := workers.m[key]; ok {
		return o, nil
	}
	o, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	workers.m[key] = o
	return o, nil
}

func gobKey(cfg Config) (string, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(cfg)
	return buf.String(), err
}

// decode returns a new accumulator of o's request holding data (empty: a
// new one).
func (o *opened) decode(data []byte) (engine.Accumulator, error) {
	acc, err := o.prep.New()
	if err != nil || len(data) == 0 {
		return acc, err
	}
	pa, ok := acc.(engine.Portable)
	if !ok {
		return nil, fmt.Errorf("%s: a %T does not travel between workers", o.prep.Analysis.Name, acc)
	}
	if err := pa.UnmarshalBinary(data); err != nil {
		return nil, o.prep.Error(err)
	}
	return acc, nil
}

// encode encodes acc, an accumulator of o's request.
func (o *opened) encode(acc engine.Accumulator) ([]byte, error) {
	pa, ok := acc.(engine.Portable)
	if !ok {
		return nil, fmt.Errorf("%s: a %T does not travel between workers", o.prep.Analysis.Name, acc)
	}
	data, err := pa.MarshalBinary()
	if err != nil {
		return nil, o.prep.Error(err)
	}
	return data, nil
}

// partSource returns the source of a part of src (a test feeds the parts
// fewer records through it, to check that the comparison sees it).
var partSource = func(src engine.Source, pt part) engine.Source { return engine.Restrict(src, pt.Runs, pt.Procs) }

// partFn feeds the accumulator of one part (its index in the plan) a pass
// over the part's records, beginning from the merged accumulator of the
// previous round (the side input; empty in the first round), and emits
// it encoded. In a pipeline of one round the part makes every pass its
// accumulator asks for (its parts are independent: processes, or runs).
type partFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *partFn) ProcessElement(ctx context.Context, i int, prev func(*[]byte) bool, emit func(int, []byte)) error {
	if i < 0 || i >= len(f.Plan.Parts) {
		return fmt.Errorf("part %d of a plan of %d", i, len(f.Plan.Parts))
	}
	o, err := prepared(ctx, f.Cfg)
	if err != nil {
		return err
	}
	var start, data []byte
	for prev(&data) {
		start = data
	}
	acc, err := o.decode(start)
	if err != nil {
		return err
	}
	src := partSource(o.src, f.Plan.Parts[i])
	for {
		if err := o.prep.Feed(ctx, src, acc); err != nil {
			return err
		}
		if f.Plan.Rounds > 1 {
			break
		}
		again, err := o.prep.Again(acc)
		if err != nil {
			return err
		}
		if !again {
			break
		}
	}
	if data, err = o.encode(acc); err != nil {
		return err
	}
	out, err := encodePart(partOutput{Index: i, Data: data})
	if err != nil {
		return err
	}
	emit(0, out)
	return nil
}

// foldFn merges the parts' accumulators in the order of the plan (the
// analyses cut by run merge later runs into earlier ones) and emits the
// merge encoded.
type foldFn struct {
	Cfg Config `json:"cfg"`
}

func (f *foldFn) ProcessElement(ctx context.Context, _ int, parts func(*[]byte) bool, emit func([]byte)) error {
	o, err := prepared(ctx, f.Cfg)
	if err != nil {
		return err
	}
	var all []partOutput
	var data []byte
	for parts(&data) {
		p, err := decodePart(data)
		if err != nil {
			return fmt.Errorf("a part's accumulator: %w", err)
		}
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b partOutput) int { return cmp.Compare(a.Index, b.Index) })
	var merged engine.Accumulator
	for _, p := range all {
		acc, err := o.decode(p.Data)
		if err != nil {
			return err
		}
		if merged == nil {
			merged = acc
		} else if err := merged.Merge(acc); err != nil {
			return o.prep.Error(err)
		}
	}
	if merged == nil {
		return errNoParts
	}
	if data, err = o.encode(merged); err != nil {
		return err
	}
	emit(data)
	return nil
}

// mergeFn combines the parts' accumulators of an analysis cut by process,
// in any order (Accumulator.Merge of disjoint processes): the runner may
// lift it into partial combines on the workers. Its accumulator is an
// encoded accumulator (empty: none yet).
type mergeFn struct {
	Cfg Config `json:"cfg"`
}

func (f *mergeFn) merge(a, b []byte) ([]byte, error) {
	switch {
	case len(a) == 0:
		return b, nil
	case len(b) == 0:
		return a, nil
	}
	o, err := prepared(context.Background(), f.Cfg)
	if err != nil {
		return nil, err
	}
	x, err := o.decode(a)
	if err != nil {
		return nil, err
	}
	y, err := o.decode(b)
	if err != nil {
		return nil, err
	}
	if err := x.Merge(y); err != nil {
		return nil, o.prep.Error(err)
	}
	return o.encode(x)
}

// CreateAccumulator returns no accumulator yet.
func (f *mergeFn) CreateAccumulator() []byte { return nil }

// AddInput merges a part's accumulator.
func (f *mergeFn) AddInput(a, in []byte) ([]byte, error) {
	p, err := decodePart(in)
	if err != nil {
		return nil, fmt.Errorf("a part's accumulator: %w", err)
	}
	return f.merge(a, p.Data)
}

// MergeAccumulators merges two merges.
func (f *mergeFn) MergeAccumulators(a, b []byte) ([]byte, error) { return f.merge(a, b) }

// ExtractOutput returns the merge.
func (f *mergeFn) ExtractOutput(a []byte) ([]byte, error) {
	if len(a) == 0 {
		return nil, errNoParts
	}
	return a, nil
}

// finishFn ends a round with the merged accumulator: it asks it for
// another pass (engine.Repeater) and emits it encoded for the next round,
// or, after the last round, writes its result in the engine's envelope
// to Cfg.Output as parscope writes it (engine.WriteJSON).
type finishFn struct {
	Cfg  Config `json:"cfg"`
	Last bool   `json:"last"`
}

func (f *finishFn) ProcessElement(ctx context.Context, data []byte, emit func([]byte)) error {
	o, err := prepared(ctx, f.Cfg)
	if err != nil {
		return err
	}
	acc, err := o.decode(data)
	if err != nil {
		return err
	}
	again, err := o.prep.Again(acc)
	if err != nil {
		return err
	}
	switch {
	case again && f.Last:
		return fmt.Errorf("%s: the analysis asks for more passes than the pipeline makes", o.prep.Analysis.Name)
	case again:
		data, err := o.encode(acc)
		if err != nil {
			return err
		}
		emit(data)
		return nil
	case !f.Last:
		return fmt.Errorf("%s: the analysis ended before the pipeline's last pass", o.prep.Analysis.Name)
	}
	env, err := o.prep.Result(acc)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := engine.WriteJSON(&buf, env); err != nil {
		return err
	}
	return WriteOutput(ctx, f.Cfg.Output, buf.Bytes())
}

// Build constructs the pipeline of cfg. It opens the input (a remote one
// is copied first) to check it, prepare the request as the engine does
// and plan the parts.
func Build(ctx context.Context, cfg Config) (*beam.Pipeline, error) {
	if cfg.Input == "" || cfg.Output == "" {
		return nil, errors.New("--input and --output are required")
	}
	if _, err := cfg.Request(); err != nil {
		return nil, err
	}
	o, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pl, err := makePlan(cfg, o)
	if err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	idx := make([]int, len(pl.Parts))
	for i := range idx {
		idx[i] = i
	}
	parts := beam.Reshuffle(s, beam.CreateList(s, idx))
	// The previous round's merged accumulator: none before the first.
	prev := beam.Create(s, []byte{})
	for round := range pl.Rounds {
		s := s.Scope(fmt.Sprintf("round %d", round))
		accs := beam.ParDo(s, &partFn{Cfg: cfg, Plan: pl}, parts, beam.SideInput{Input: prev})
		var merged beam.PCollection
		if pl.Ordered {
			merged = beam.ParDo(s, &foldFn{Cfg: cfg}, beam.GroupByKey(s, accs))
		} else {
			merged = beam.Combine(s, &mergeFn{Cfg: cfg}, beam.DropKey(s, accs))
		}
		last := round == pl.Rounds-1
		next := beam.ParDo(s, &finishFn{Cfg: cfg, Last: last}, merged)
		if !last {
			prev = next
		}
	}
	return p, nil
}

// Run builds the pipeline of cfg and runs it on runner, after checking
// that the runner can be reached within timeout (so that a runner that is
// not there is a clear error, not a hang).
func Run(ctx context.Context, cfg Config, runner string, timeout time.Duration) error {
	if err := Reachable(ctx, runner, timeout); err != nil {
		return err
	}
	p, err := Build(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := beam.Run(ctx, runner, p); err != nil {
		return fmt.Errorf("%s on %s: %w", cfg.Analysis, runner, err)
	}
	return nil
}

// Reachable checks that runner is known and that its job service (the
// --endpoint flag of Beam, for prism when set and for flink and spark;
// the Dataflow API for dataflow) accepts a connection within timeout.
func Reachable(ctx context.Context, runner string, timeout time.Duration) error {
	var addr string
	switch runner {
	case "prism":
		if *jobopts.Endpoint == "" {
			return nil // an in-process Prism
		}
		addr = *jobopts.Endpoint
	case "flink", "spark":
		if *jobopts.Endpoint == "" {
			return fmt.Errorf("the %s runner needs --endpoint HOST:PORT, the address of a Beam job server for %s (for example apache/beam_%s_job_server)", runner, runner, runner)
		}
		addr = *jobopts.Endpoint
	case "dataflow":
		for _, name := range []string{"project", "region", "staging_location"} {
			if f := flag.Lookup(name); f == nil || f.Value.String() == "" {
				return fmt.Errorf("the dataflow runner needs --project, --region and --staging_location (gs://...) (missing --%s)", name)
			}
		}
		addr = "dataflow.googleapis.com:443"
		if f := flag.Lookup("dataflow_endpoint"); f != nil && f.Value.String() != "" {
			if u, err := url.Parse(f.Value.String()); err == nil && u.Host != "" {
				addr = u.Host
				if u.Port() == "" {
					addr += ":443"
				}
			}
		}
	default:
		return fmt.Errorf("unknown runner %q (want one of %s, or inprocess)", runner, strings.Join(Runners, ", "))
	}
	d := net.Dialer{Timeout: timeout}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("the %s runner's job service at %s is not reachable (gave up after %v): %w", runner, addr, timeout, err)
	}
	return conn.Close()
}
