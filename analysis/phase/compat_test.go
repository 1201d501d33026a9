package phase

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// readData returns the content of a file of testdata/real/bbv, gunzipped
// if needed.
func readData(t testing.TB, rel string) []byte {
	t.Helper()
	raw, err := os.ReadFile(dataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		raw, err = io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

var (
	bbCacheMu sync.Mutex
	bbCache   = map[string]*bbv.File{}
)

// loadBB parses a .bb file of testdata/real/bbv the way SimPoint does
// (cached).
func loadBB(t testing.TB, rel string) *bbv.File {
	t.Helper()
	path := dataFile(t, rel)
	bbCacheMu.Lock()
	defer bbCacheMu.Unlock()
	if f, ok := bbCache[rel]; ok {
		return f
	}
	f, err := bbv.ReadFile(path, bbv.ParseOptions{SimPointQuirks: true})
	if err != nil {
		t.Fatal(err)
	}
	bbCache[rel] = f
	return f
}

// formatDataset prints rows the way SimPoint's Dataset text format does:
// "N:w", then per row "<weight> <dim>: v1 v2 ... " with %.20g numbers.
func formatDataset(x []float64, d int, w []float64) string {
	var b strings.Builder
	n := len(x) / d
	fmt.Fprintf(&b, "%d:w\n", n)
	for i := 0; i < n; i++ {
		b.WriteString(strconv.FormatFloat(w[i], 'g', 20, 64))
		fmt.Fprintf(&b, " %d: ", d)
		for _, v := range x[i*d : (i+1)*d] {
			b.WriteString(strconv.FormatFloat(v, 'g', 20, 64))
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// diffText reports the first differing line of two texts.
func diffText(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s differs at line %d (of %d and %d):\n got  %.300s\n want %.300s", what, i+1, len(g), len(w), gl, wl)
			return
		}
	}
}

func TestFormatG(t *testing.T) {
	for x, want := range map[float64]string{
		0.0973077: "0.0973077", 1e-05: "1e-05", 1234567: "1.23457e+06", 2.5e-17: "2.5e-17",
		-8613.81: "-8613.81", 0: "0", 0.5: "0.5", 1.0 / 65: "0.0153846", 100000: "100000", 1e6: "1e+06",
	} {
		if got := FormatG(x); got != want {
			t.Errorf("FormatG(%v) = %s, want %s", x, got, want)
		}
	}
}

func TestProjectionMatrixGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		dim  int32
	}{
		{"simpoint-3.2/sample/sample.projmatrix.txt", 50},
		{"simpoint-3.2/golden/bzip2_rt.projmatrix.txt.gz", 4235},
	} {
		want := string(readData(t, tc.file))
		p, err := ProjectionMatrix(DefaultSeedProj, tc.dim, 15)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, tc.dim)
		for i := range w {
			w[i] = 1.0 / float64(tc.dim)
		}
		diffText(t, tc.file, formatDataset(p, 15, w), want)
	}
}

func TestProjectedVectorsGolden(t *testing.T) {
	for _, name := range []string{"sample/sample", "golden/bzip2_rt_100M", "golden/phases"} {
		bb := strings.Replace(name, "golden/", "", 1) + ".bb.gz"
		if name == "sample/sample" {
			bb = "simpoint-3.2/sample/sample.bb"
		}
		vec := "simpoint-3.2/" + name + ".vectors.txt"
		if name != "sample/sample" {
			vec += ".gz"
		}
		opts := DefaultOptions()
		ds, err := load(context.Background(), loadBB(t, bb), &opts)
		if err != nil {
			t.Fatal(err)
		}
		diffText(t, vec, formatDataset(ds.x, ds.d, ds.w), string(readData(t, vec)))
	}
}

// reference describes one set of SimPoint 3.2 outputs.
type reference struct {
	name   string // prefix of the output files under simpoint-3.2/
	bb     string // input
	opts   func(*Options)
	labels bool   // a .labels file exists
	golden string // prefix of initctrs/finalctrs files, if any
}

var references = []reference{
	{name: "sample/sample", bb: "simpoint-3.2/sample/sample.bb", labels: true, golden: "sample/sample"},
	{name: "bzip2_rt_100M", bb: "bzip2_rt_100M.bb.gz", labels: true, golden: "golden/bzip2_rt_100M"},
	{name: "phases", bb: "phases.bb.gz", labels: true, golden: "golden/phases"},
	{name: "bzip2_rt_100M.seeded", bb: "bzip2_rt_100M.bb.gz", labels: true, opts: seeded},
	{name: "phases.seeded", bb: "phases.bb.gz", labels: true, opts: seeded},
	{name: "bzip2_rt_100M.vli", bb: "bzip2_rt_100M.bb.gz", opts: vli},
	{name: "phases.vli", bb: "phases.bb.gz", opts: vli},
}

func seeded(o *Options) { o.SeedKMeans, o.SeedProj = 12345, 67890 }
func vli(o *Options)    { o.VariableLength = true }

// runCache holds engine runs shared by the tests of one reference.
var (
	runMu    sync.Mutex
	runCache = map[string]*engine{}
)

func runReference(t *testing.T, ref reference) (*engine, *Result) {
	t.Helper()
	f := loadBB(t, ref.bb)
	opts := DefaultOptions()
	if ref.opts != nil {
		ref.opts(&opts)
	}
	runMu.Lock()
	defer runMu.Unlock()
	e, ok := runCache[ref.name]
	if !ok {
		ds, err := load(context.Background(), f, &opts)
		if err != nil {
			t.Fatal(err)
		}
		e = &engine{ds: ds, opts: opts, workers: 2}
		if err := e.search(context.Background()); err != nil {
			t.Fatal(err)
		}
		runCache[ref.name] = e
	}
	return e, e.result()
}

// TestCompatOutputs compares the .simpoints, .weights and .labels files
// with SimPoint 3.2's, byte for byte.
func TestCompatOutputs(t *testing.T) {
	for _, ref := range references {
		t.Run(ref.name, func(t *testing.T) {
			_, res := runReference(t, ref)
			files := []struct {
				ext   string
				write func(io.Writer) error
			}{{".simpoints", res.WriteSimpoints}, {".weights", res.WriteWeights}}
			if ref.labels {
				files = append(files, struct {
					ext   string
					write func(io.Writer) error
				}{".labels", res.WriteLabels})
			}
			for _, f := range files {
				var b bytes.Buffer
				if err := f.write(&b); err != nil {
					t.Fatal(err)
				}
				want := readData(t, "simpoint-3.2/"+ref.name+f.ext)
				if !bytes.Equal(b.Bytes(), want) {
					diffText(t, ref.name+f.ext, b.String(), string(want))
				}
			}
		})
	}
}

// logRun is what SimPoint's log says about one k.
type logRun struct {
	k      int
	trials []logTrial
	best   int
}

type logTrial struct {
	seed                  int64
	iters                 int
	bic, distortion, vari string
}

type simpointLog struct {
	maxRuns int
	runs    []logRun
	chosen  int
}

var (
	reRun    = regexp.MustCompile(`^Run number (\d+) of at most (\d+), k = (\d+)$`)
	reSeed   = regexp.MustCompile(`^  Initialization seed trial #(\d+) of \d+; initialization seed = (-?\d+)$`)
	reIters  = regexp.MustCompile(`^  Number of k-means iterations performed: (\d+)$`)
	reBIC    = regexp.MustCompile(`^  BIC score: (\S+)$`)
	reDist   = regexp.MustCompile(`^  Distortion: (\S+)$`)
	reVar    = regexp.MustCompile(`^  Variance: (\S+)$`)
	reBest   = regexp.MustCompile(`^  The best initialization seed trial was #(\d+)$`)
	reChosen = regexp.MustCompile(`^  For the BIC threshold, the best clustering was run (\d+) \(k = (\d+)\)$`)
)

func parseLog(t *testing.T, text []byte) simpointLog {
	t.Helper()
	var l simpointLog
	sc := bufio.NewScanner(bytes.NewReader(text))
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for sc.Scan() {
		line := sc.Text()
		cur := func() *logRun { return &l.runs[len(l.runs)-1] }
		tr := func() *logTrial { r := cur(); return &r.trials[len(r.trials)-1] }
		if m := reRun.FindStringSubmatch(line); m != nil {
			l.maxRuns = atoi(m[2])
			l.runs = append(l.runs, logRun{k: atoi(m[3])})
		} else if m := reSeed.FindStringSubmatch(line); m != nil {
			cur().trials = append(cur().trials, logTrial{seed: int64(atoi(m[2]))})
		} else if m := reIters.FindStringSubmatch(line); m != nil {
			tr().iters = atoi(m[1])
		} else if m := reBIC.FindStringSubmatch(line); m != nil {
			tr().bic = m[1]
		} else if m := reDist.FindStringSubmatch(line); m != nil {
			tr().distortion = m[1]
		} else if m := reVar.FindStringSubmatch(line); m != nil {
			tr().vari = m[1]
		} else if m := reBest.FindStringSubmatch(line); m != nil {
			cur().best = atoi(m[1]) - 1
		} else if m := reChosen.FindStringSubmatch(line); m != nil {
			l.chosen = atoi(m[1]) - 1
		}
	}
	return l
}

// TestCompatLog compares every evaluated k, trial seed, iteration count,
// BIC score, distortion and variance, the best trial of each k and the
// chosen run with SimPoint's log, as printed (%g).
func TestCompatLog(t *testing.T) {
	for _, ref := range references {
		t.Run(ref.name, func(t *testing.T) {
			e, res := runReference(t, ref)
			l := parseLog(t, readData(t, "simpoint-3.2/"+ref.name+".out"))
			if len(l.runs) == 0 {
				t.Fatal("no runs in the log")
			}
			if l.maxRuns != res.MaxRuns || len(l.runs) != len(res.Evaluated) || l.chosen != res.Chosen {
				t.Fatalf("runs: got %d of at most %d, chosen %d; log has %d of at most %d, chosen %d",
					len(res.Evaluated), res.MaxRuns, res.Chosen, len(l.runs), l.maxRuns, l.chosen)
			}
			for r, lr := range l.runs {
				ev := res.Evaluated[r]
				if ev.K != lr.k || ev.BestTrial != lr.best || len(ev.Trials) != len(lr.trials) {
					t.Errorf("run %d: got k=%d best=%d (%d trials), log k=%d best=%d (%d trials)",
						r+1, ev.K, ev.BestTrial, len(ev.Trials), lr.k, lr.best, len(lr.trials))
					continue
				}
				for i, lt := range lr.trials {
					tr := ev.Trials[i]
					// The log prints seedkm + r·N + t; the seed used is
					// seedkm + r·N + 2t.
					if logged := tr.Seed - int64(i); logged != lt.seed {
						t.Errorf("run %d trial %d: logged seed %d, want %d", r+1, i+1, logged, lt.seed)
					}
					cl := e.runs[r].trials[i]
					variance := cl.distortion / float64(e.ds.n-cl.k)
					got := fmt.Sprintf("%d %s %s %s", tr.Iterations, FormatG(float64(tr.BIC)), FormatG(float64(tr.Distortion)), FormatG(variance))
					want := fmt.Sprintf("%d %s %s %s", lt.iters, lt.bic, lt.distortion, lt.vari)
					if got != want {
						t.Errorf("run %d (k=%d) trial %d: iterations, BIC, distortion, variance = %s; log: %s", r+1, ev.K, i+1, got, want)
					}
				}
			}
		})
	}
}

// TestCompatCentres compares the chosen clustering's initial and final
// centres, with their weights, with SimPoint's -saveInitCtrs and
// -saveFinalCtrs files.
func TestCompatCentres(t *testing.T) {
	for _, ref := range references {
		if ref.golden == "" {
			continue
		}
		t.Run(ref.name, func(t *testing.T) {
			e, res := runReference(t, ref)
			ev := e.runs[res.Chosen]
			cl := ev.trials[ev.best]
			diffText(t, "initctrs", formatDataset(cl.initCentres, e.ds.d, cl.initWeights),
				string(readData(t, "simpoint-3.2/"+ref.golden+".initctrs.txt")))
			diffText(t, "finalctrs", formatDataset(cl.centres, e.ds.d, cl.weights),
				string(readData(t, "simpoint-3.2/"+ref.golden+".finalctrs.txt")))
		})
	}
}
