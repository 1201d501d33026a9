package gomez

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// FuzzImport feeds arbitrary bytes to the importer through a file. It must
// not panic; when it succeeds, every process's records are in time order,
// every pid is below its run's Procs, every block has a StateDef and the
// header is valid. Each line is also parsed by both line parsers, which
// must agree whenever the fast one accepts; so must the pid scan's
// shortcut, lastPid. The import that guesses the pids are 0..P-1 must give
// what the import reading them first gives.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"merged2runs.srt", "amoeba.srt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0))
	}
	f.Add([]byte("0 1 0\n12.345 2 1\n3 1 0\n"), uint8(1))
	f.Add([]byte("# c\n\n1 2 3\r\n"), uint8(2))
	f.Add([]byte("9223372036854775 1 0\n"), uint8(0))
	dir := f.TempDir()
	units := []time.Duration{0, time.Nanosecond, time.Millisecond, 10 * time.Microsecond}
	f.Fuzz(func(t *testing.T, data []byte, unitSel uint8) {
		unit := units[int(unitSel)%len(units)]
		u := unit
		if u == 0 {
			u = DefaultUnit
		}
		p := newParser(u, 0)
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			// The pid scan's shortcut never takes a pid from a line the
			// import skips, nor another pid than the record's.
			if lp, lok := p.lastPid(line); lok {
				kind, _, _, sp, _ := p.slow(line)
				if kind == lineSkip || (kind == lineRecord && sp != lp) {
					t.Fatalf("line %q: lastPid %d, slow kind %d pid %d", line, lp, kind, sp)
				}
			}
			ft, fb, fp, ok := p.fast(line)
			// The bytes after the line in its buffer must not matter.
			ct, cb, cp, cok := p.fast(line[:len(line):len(line)])
			if ok != cok || ct != ft || cb != fb || cp != fp {
				t.Fatalf("line %q: fast %d %d %d %v, with no bytes after it %d %d %d %v", line, ft, fb, fp, ok, ct, cb, cp, cok)
			}
			if !ok {
				continue
			}
			kind, st, sb, sp, msg := p.slow(line)
			if kind != lineRecord || st != ft || sb != fb || sp != fp {
				t.Fatalf("line %q: fast %d %d %d, slow %d %d %d %d %q", line, ft, fb, fp, kind, st, sb, sp, msg)
			}
		}

		path := filepath.Join(dir, "fuzz.srt")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Guessing that the pids are 0..P-1 (a writer that can start
		// again) and reading them first give the same trace or error.
		guessed := &resets{}
		gerr := Import(context.Background(), []string{path}, format.Options{TimeUnit: unit}, guessed)
		scanned := &trace.Memory{}
		serr := Import(context.Background(), []string{path}, format.Options{TimeUnit: unit}, noReset{scanned})
		if fmt.Sprint(gerr) != fmt.Sprint(serr) {
			t.Fatalf("guessing the pids: error %v; reading them first: %v", gerr, serr)
		}
		if gerr == nil && (!slices.Equal(guessed.Records, scanned.Records) || !reflect.DeepEqual(guessed.H, scanned.H)) {
			t.Fatalf("guessing the pids: %d records, header %+v; reading them first: %d, %+v",
				len(guessed.Records), guessed.H, len(scanned.Records), scanned.H)
		}

		w := &formattest.Collect{}
		err := Import(context.Background(), []string{path}, format.Options{TimeUnit: unit}, w)
		(Importer{}).Detect(path, data)
		if err != nil {
			return
		}
		w.Check(t)
		states := trace.NewIndex(&w.H)
		for _, r := range w.Records {
			if int(r.Run) >= len(w.H.Runs) || r.Proc >= w.H.Runs[r.Run].Procs {
				t.Fatalf("record %v outside the runs %+v", r, w.H.Runs)
			}
			if r.Kind != trace.KindState || r.T < 0 || r.ID < 0 {
				t.Fatalf("record %v", r)
			}
			if states.State(r.ID) == nil {
				t.Fatalf("block %d has no StateDef", r.ID)
			}
		}
	})
}
