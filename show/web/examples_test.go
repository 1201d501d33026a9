package web

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/parscope/parscope/format"
	_ "github.com/parscope/parscope/format/all"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
)

// examples is testdata/examples, from this package.
const examples = "../../testdata/examples"

// ringSource is a stand-in for the ring program's source (the example
// trace names ring.f, lines 100-110, which the repository does not hold):
// written into the test's source directory to show the linked lines.
func ringSource() string {
	s := ""
	for i := 1; i < 100; i++ {
		s += "c     line " + strconv.Itoa(i) + "\n"
	}
	s += "      DO 110 STEP = 1, NSTEPS\n        IF (MOD(STEP, 8) .NE. 0) THEN\n          CALL MPI_IRECV(BUF, N, MPI_DOUBLE, LEFT, TAG, COMM, REQ, IERR)\n" +
		"          CALL MPI_SEND(BUF, N, MPI_DOUBLE, RIGHT, TAG, COMM, IERR)\n          CALL MPI_WAIT(REQ, STATUS, IERR)\n        ENDIF\n" +
		"        CALL MPI_ALLREDUCE(X, Y, 1, MPI_DOUBLE, MPI_SUM, COMM, IERR)\n        X = Y\n        N = N + 1\n        TAG = TAG + 1\n  110 CONTINUE\n"
	return s
}

var (
	examplesOnce    sync.Once
	examplesBundles map[string]*report.Bundle
	examplesErr     error
	// examplesStores are the example traces' .pst directories and
	// examplesOptions the report options of their bundles, by name.
	examplesStores  map[string]string
	examplesOptions map[string]report.Options
)

// importExample imports inputs into dir/name.pst.
func importExample(dir, name, dict string, inputs ...string) (string, error) {
	imp, err := format.Detect(inputs[0])
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, name+".pst")
	w, err := store.Create(out, store.Options{})
	if err != nil {
		return "", err
	}
	defer w.Abort()
	if err := imp.Import(context.Background(), inputs, format.Options{Dict: dict, Params: map[string]string{}}, w); err != nil {
		return "", err
	}
	return out, w.Close()
}

// exampleBundles analyses the example traces once per test binary:
// "amoeba" (states), "ring" (messages, regions, events; with a probe
// result and the ring source) and "gzip" (basic block vectors).
func exampleBundles(t testing.TB) map[string]*report.Bundle {
	t.Helper()
	examplesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "parscope-web-test-*")
		if err != nil {
			examplesErr = err
			return
		}
		src := filepath.Join(dir, "src")
		if examplesErr = os.MkdirAll(src, 0o755); examplesErr != nil {
			return
		}
		if examplesErr = os.WriteFile(filepath.Join(src, "ring.f"), []byte(ringSource()), 0o644); examplesErr != nil {
			return
		}
		ring, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
		type ex struct {
			name, dict string
			inputs     []string
			opts       report.Options
		}
		// A probe result shaped like probe.CurvePoint lists (made up: the
		// probe package writes the real ones).
		probe := []byte(`{"probe":"ring","et_ref_s":1.25,"curve":[{"k":1,"weight":0.5,"bytes":1200,"raw_bytes":5000,"predicted_s":1.4,"error":0.12},{"k":2,"weight":0.8,"bytes":2500,"raw_bytes":9000,"predicted_s":1.3,"error":0.04},{"k":3,"weight":1,"bytes":4100,"raw_bytes":15000,"predicted_s":1.26,"error":0.008}]}`)
		list := []ex{
			{"amoeba", filepath.Join(examples, "amoeba_blocks.txt"), []string{filepath.Join(examples, "amoeba.srt")}, report.Options{}},
			{"ring", "", ring, report.Options{SourceDirs: []string{src}, Probe: probe}},
			{"gzip", "", []string{filepath.Join(examples, "gzip.bb.gz")}, report.Options{}},
		}
		examplesBundles = map[string]*report.Bundle{}
		examplesStores, examplesOptions = map[string]string{}, map[string]report.Options{}
		for _, e := range list {
			pst, err := importExample(dir, e.name, e.dict, e.inputs...)
			if err != nil {
				examplesErr = err
				return
			}
			b, err := report.Build(context.Background(), pst, e.opts)
			if err != nil {
				examplesErr = err
				return
			}
			examplesBundles[e.name] = b
			examplesStores[e.name], examplesOptions[e.name] = pst, e.opts
		}
	})
	if examplesErr != nil {
		t.Fatal(examplesErr)
	}
	return examplesBundles
}

// orderedBundles returns amoeba, ring, gzip: the traces 0, 1, 2 of the tests.
func orderedBundles(t testing.TB) []*report.Bundle {
	b := exampleBundles(t)
	return []*report.Bundle{b["amoeba"], b["ring"], b["gzip"]}
}
