package engine

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as every face writes a result: JSON indented by two
// spaces, with a newline. It is what `parscope ANALYSIS --json` prints and
// what parscope-beam writes, for an Envelope.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
