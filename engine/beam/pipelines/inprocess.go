package pipelines

import (
	"bytes"
	"context"
	"errors"

	"github.com/parscope/parscope/engine"
)

// InProcess runs cfg's analysis without Beam, as `parscope ANALYSIS
// --json` does: engine.Run over the whole trace in one process, its
// envelope written by engine.WriteJSON. It is what every pipeline must
// write (the tests compare them) and parscope-beam's --runner inprocess.
func InProcess(ctx context.Context, cfg Config) ([]byte, error) {
	if cfg.Input == "" {
		return nil, errors.New("--input is required")
	}
	o, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res, err := engine.Run(ctx, o.src, []engine.Request{o.prep.Request})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := engine.WriteJSON(&buf, res.Envelopes[0]); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
