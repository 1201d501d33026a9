package phase

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// TestRunParts checks that clustering a stream projected in parts gives
// Run's result on the whole stream, for projected and unprojected rows and
// both weightings.
func TestRunParts(t *testing.T) {
	f, err := bbv.ReadFile("../../testdata/examples/gzip.bb.gz", bbv.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		dim      int
		variable bool
	}{{"projected", 15, false}, {"variable", 15, true}, {"unprojected", NoProject, false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Dim, opts.VariableLength, opts.MaxK = tc.dim, tc.variable, 4
			want, err := Run(ctx, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			var parts []*Part
			for first := 0; first < len(f.Vectors); first += 100 {
				end := min(first+100, len(f.Vectors))
				sub := &bbv.File{Name: f.Name, Vectors: f.Vectors[first:end], Dim: f.Dim}
				p, err := ProjectPart(ctx, sub, first, opts)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
			}
			got, err := RunParts(ctx, parts, opts)
			if err != nil {
				t.Fatal(err)
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if string(wj) != string(gj) {
				t.Fatalf("parts give\n%.400s\nwant\n%.400s", gj, wj)
			}
			if _, err := RunParts(ctx, []*Part{parts[1], parts[0]}, opts); err == nil {
				t.Fatal("parts out of order were accepted")
			}
		})
	}
}
