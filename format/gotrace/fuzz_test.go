package gotrace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

// FuzzImport feeds arbitrary bytes to the importer through a file, by
// goroutine or by P. It must not panic (a panic of the x/exp/trace reader
// is recovered into an error); when it succeeds, the header is valid,
// every process's records are in time order, every process is below its
// run's Procs and every id has its dictionary entry.
func FuzzImport(f *testing.F) {
	data := realdata.Read(f, "traces/go/annotations.go1.26.trace")
	f.Add(data, false)
	f.Add(data, true)
	f.Add(data[:16], false)
	f.Add(data[:200], false)
	f.Add(append([]byte("go 1.25 trace\x00\x00\x00"), data[16:]...), false)
	f.Add(append([]byte("go 1.21 trace\x00\x00\x00"), data[16:300]...), true)
	f.Add([]byte("go 1.99 trace\x00\x00\x00\x01\x02"), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, byP bool) {
		path := filepath.Join(dir, "fuzz.trace")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		params := map[string]string{ParamPartial: "true"}
		if byP {
			params[ParamBy] = "p"
		}
		w := &formattest.Collect{}
		err := Import(context.Background(), []string{path}, format.Options{Params: params}, w)
		(Importer{}).Detect(path, data)
		if err != nil {
			return
		}
		w.Check(t)
		ix := trace.NewIndex(&w.H)
		for _, r := range w.Records {
			if r.Run != 0 || r.Proc >= w.H.Runs[0].Procs || r.T < 0 {
				t.Fatalf("record %v outside the run %+v", r, w.H.Runs)
			}
			switch r.Kind {
			case trace.KindState:
				if ix.State(r.ID) == nil {
					t.Fatalf("state %d has no StateDef", r.ID)
				}
			case trace.KindEvent:
				if ix.Event(r.ID) == nil {
					t.Fatalf("event %d has no EventDef", r.ID)
				}
			case trace.KindEnter, trace.KindExit:
				if ix.Region(r.ID) == nil {
					t.Fatalf("region %d has no RegionDef", r.ID)
				}
			default:
				t.Fatalf("unexpected record %v", r)
			}
		}
		if len(w.H.Procs) != int(w.H.Runs[0].Procs) {
			t.Fatalf("%d ProcInfos for %d processes", len(w.H.Procs), w.H.Runs[0].Procs)
		}
	})
}
