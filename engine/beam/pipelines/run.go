package pipelines

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	// The runners parscope-beam offers.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
)

// Runners lists the runners a pipeline can run on.
var Runners = []string{"prism", "flink", "spark", "dataflow"}

func init() {
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(string), error](&writeFn{})
	register.Function2x2(wrapPart)
	register.Emitter1[string]()
}

// Document is the RESULT.json a pipeline writes: the analysis, its input,
// and the results in (run, process or window) order. Each analysis's
// result type is the one the core returns (for states, the type the CLI
// printed; for mentropy, the processes of the engine's mentropy.Result).
type Document struct {
	Analysis string            `json:"analysis"`
	Input    string            `json:"input"`
	Results  []json.RawMessage `json:"results"`
}

// part is one piece of the output: its sort key and a JSON array of
// results.
type part struct {
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data"`
}

// wrapPart makes a keyed output part one value, for the final gathering.
func wrapPart(key string, data []byte) ([]byte, error) {
	return json.Marshal(part{Key: key, Data: data})
}

// writeFn gathers the output parts (all under one key), sorts them and
// writes the document.
type writeFn struct {
	Cfg Config `json:"cfg"`
}

func (f *writeFn) ProcessElement(ctx context.Context, _ int, parts func(*[]byte) bool, emit func(string)) error {
	var all []part
	var data []byte
	for parts(&data) {
		var p part
		if err := json.Unmarshal(data, &p); err != nil {
			return err
		}
		all = append(all, p)
	}
	doc, err := assemble(f.Cfg, all)
	if err != nil {
		return err
	}
	if err := WriteOutput(ctx, f.Cfg.Output, doc); err != nil {
		return err
	}
	emit(f.Cfg.Output)
	return nil
}

// assemble sorts the parts and concatenates their arrays into a Document.
func assemble(cfg Config, parts []part) ([]byte, error) {
	slices.SortStableFunc(parts, func(a, b part) int { return strings.Compare(a.Key, b.Key) })
	doc := Document{Analysis: cfg.Analysis, Input: cfg.Input, Results: []json.RawMessage{}}
	for _, p := range parts {
		var rs []json.RawMessage
		if err := json.Unmarshal(p.Data, &rs); err != nil {
			return nil, fmt.Errorf("result part %s: %w", p.Key, err)
		}
		doc.Results = append(doc.Results, rs...)
	}
	if cfg.Analysis == PCA && len(doc.Results) == 0 {
		return nil, errNoStates
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errNoStates is PCA's error for a trace without states, in process and
// in a pipeline.
var errNoStates = errors.New("pca: no states to analyse (the trace has no state records)")

// Build constructs the pipeline of cfg. It reads the manifest of the input
// (to plan the shards) and checks it.
func Build(ctx context.Context, cfg Config) (*beam.Pipeline, error) {
	if !slices.Contains(Analyses, cfg.Analysis) {
		return nil, fmt.Errorf("unknown analysis %q (want one of %s)", cfg.Analysis, strings.Join(Analyses, ", "))
	}
	if cfg.Input == "" || cfg.Output == "" {
		return nil, errors.New("--input and --output are required")
	}
	pl, err := makePlan(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	var parts beam.PCollection
	switch cfg.Analysis {
	case EntropyHistogram, PCA, States:
		parts = finishWindowed(s, cfg, buildWindowed(s, cfg, pl))
	case MEntropy, Phases:
		parts = buildPerProc(s, cfg, pl)
	case Occupancy:
		parts = buildOccupancy(s, cfg, pl)
	case Comm:
		parts = buildComm(s, cfg, pl)
	}
	wrapped := beam.ParDo(s, wrapPart, parts)
	// An empty part, so that the document is written when the trace has
	// nothing for the analysis.
	empty, err := json.Marshal(part{Data: json.RawMessage("[]")})
	if err != nil {
		return nil, err
	}
	all := beam.Flatten(s, wrapped, beam.Create(s, empty))
	beam.ParDo(s, &writeFn{Cfg: cfg}, beam.GroupByKey(s, beam.AddFixedKey(s, all)))
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
		return fmt.Errorf("unknown runner %q (want one of %s)", runner, strings.Join(Runners, ", "))
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
