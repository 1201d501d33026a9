package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
)

// readJSONFile decodes a JSON file of a report.
func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestAnalyzeAmoeba analyses the example straight from its text file and
// checks that the report holds what the analysis commands print.
func TestAnalyzeAmoeba(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	out := mustRun(t, "analyze", "--json", "--dict", filepath.Join(examples, "amoeba_blocks.txt"), "-o", dir, filepath.Join(examples, "amoeba.srt"))
	var summary struct {
		Trace   string            `json:"trace"`
		Ran     []string          `json:"ran"`
		Skipped map[string]string `json:"skipped"`
		Files   []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if summary.Trace != "amoeba.srt" || strings.Join(summary.Ran, ",") != "overview,states,entropy,pca,phasespace,occupancy,profile" || summary.Skipped["comm"] == "" {
		t.Errorf("summary %+v", summary)
	}
	for _, name := range []string{"index.html", "report.json", "overview.json", "states.json", "entropy.json", "pca.json", "phasespace.json", "occupancy.json", "profile.json",
		"pca-pc1.png", "pca-pc1.svg", "pca-pc12.png", "phasespace.png", "entropy.png", "occupancy.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the report has no %s: %v", name, err)
		}
	}
	if len(summary.Files) != 19 { // index.html, report.json, 7 results (profile too), 5 plots in PNG and SVG
		t.Errorf("%d files written", len(summary.Files))
	}
	if st, err := os.Stat(filepath.Join(dir, "index.html")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("index.html: %v, mode %v", err, st.Mode())
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte("<script src=")) || !bytes.Contains(html, []byte("window.PARSCOPE_DATA=")) {
		t.Error("index.html is not self-contained")
	}
	pngData, err := os.ReadFile(filepath.Join(dir, "pca-pc1.png"))
	if err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(bytes.NewReader(pngData)); err != nil || img.Bounds().Dx() < 300 {
		t.Errorf("pca-pc1.png: %v", err)
	}
	// The same numbers as the analysis commands.
	pst := importAmoeba(t)
	type entropyRuns struct {
		Result struct {
			Runs []struct {
				Run         int32   `json:"run"`
				CombEntropy float64 `json:"comb_entropy"`
				Rows        int64   `json:"rows"`
			} `json:"runs"`
		} `json:"result"`
	}
	var envFile, envCLI entropyRuns
	readJSONFile(t, filepath.Join(dir, "entropy.json"), &envFile)
	if err := json.Unmarshal([]byte(mustRun(t, "entropy", "--json", pst)), &envCLI); err != nil {
		t.Fatal(err)
	}
	ent, entCLI := envFile.Result, envCLI.Result
	if len(ent.Runs) != 5 || len(ent.Runs) != len(entCLI.Runs) {
		t.Fatalf("entropy: %d runs in the report, %d from the command", len(ent.Runs), len(entCLI.Runs))
	}
	for i := range ent.Runs {
		if ent.Runs[i] != entCLI.Runs[i] {
			t.Errorf("entropy run %d: report %+v, command %+v", i, ent.Runs[i], entCLI.Runs[i])
		}
	}
	var pc, pcCLI struct {
		Result struct {
			Components []struct {
				Variance  float64 `json:"variance"`
				Explained float64 `json:"explained"`
			} `json:"components"`
		} `json:"result"`
	}
	readJSONFile(t, filepath.Join(dir, "pca.json"), &pc)
	if err := json.Unmarshal([]byte(mustRun(t, "pca", "--json", pst)), &pcCLI); err != nil {
		t.Fatal(err)
	}
	if len(pc.Result.Components) != 3 || len(pcCLI.Result.Components) != 3 {
		t.Fatalf("pca: %d and %d components", len(pc.Result.Components), len(pcCLI.Result.Components))
	}
	for i, c := range pc.Result.Components {
		if want := pcCLI.Result.Components[i].Variance; math.Abs(c.Variance-want) > 1e-9*want {
			t.Errorf("PC%d: variance %v in the report, %v from the command", i+1, c.Variance, want)
		}
	}
	// occupancy.json is the engine's envelope, the one the command prints
	// for the same options (TestOccupancyFacesAgree compares them whole).
	var occ struct {
		Options occupancy.Params `json:"options"`
		Result  occupancy.Report `json:"result"`
	}
	readJSONFile(t, filepath.Join(dir, "occupancy.json"), &occ)
	// No start mode: the report, like the command, needs none.
	occCLI := decodeOccupancy(t, mustRun(t, "occupancy", "--json", pst))
	if len(occ.Result.Runs) != 5 || len(occCLI) != 5 || occ.Options.Start != "" {
		t.Fatalf("occupancy: %d and %d runs, start %q", len(occ.Result.Runs), len(occCLI), occ.Options.Start)
	}
	for i, r := range occ.Result.Runs {
		for j := range r.Mean {
			if r.Mean[j] != occCLI[i].Mean[j] {
				t.Errorf("occupancy run %d mode %d: report %+v, command %+v", i, j, r.Mean[j], occCLI[i].Mean[j])
			}
		}
	}
}

// TestAnalyzeRingAndGzip checks the communication, modified entropy and
// phase results against their commands.
func TestAnalyzeRingAndGzip(t *testing.T) {
	ring := importRing(t)
	dir := filepath.Join(t.TempDir(), "ring-report")
	out := mustRun(t, "analyze", "-o", dir, ring)
	if !strings.Contains(out, "ran      comm") || !strings.Contains(out, "ran      states") {
		t.Errorf("analyze printed:\n%s", out)
	}
	// The ring records regions, no states: the report and the command
	// derive the same states from them.
	var occ struct {
		StatesFrom string           `json:"states_from"`
		Result     occupancy.Report `json:"result"`
	}
	readJSONFile(t, filepath.Join(dir, "occupancy.json"), &occ)
	occCLI := decodeOccupancy(t, mustRun(t, "occupancy", "--json", ring))
	if occ.StatesFrom != "regions" || len(occ.Result.Runs) != 1 || len(occCLI) != 1 || len(occ.Result.Runs[0].Mean) < 2 {
		t.Fatalf("occupancy of the ring: states from %q, %d and %d runs", occ.StatesFrom, len(occ.Result.Runs), len(occCLI))
	}
	for j, m := range occ.Result.Runs[0].Mean {
		if m != occCLI[0].Mean[j] {
			t.Errorf("ring occupancy mode %d: report %+v, command %+v", j, m, occCLI[0].Mean[j])
		}
	}
	type nodes struct {
		Nodes []struct {
			Path string `json:"path"`
			Own  struct {
				Bytes    int64 `json:"bytes"`
				Messages int64 `json:"messages"`
				Degree   int   `json:"degree"`
			} `json:"own"`
		} `json:"nodes"`
	}
	var cr, cCLIr struct {
		Result struct {
			Runs []nodes `json:"runs"`
		} `json:"result"`
	}
	readJSONFile(t, filepath.Join(dir, "comm.json"), &cr)
	if err := json.Unmarshal([]byte(mustRun(t, "comm", "--json", ring)), &cCLIr); err != nil {
		t.Fatal(err)
	}
	if len(cr.Result.Runs) != 1 || len(cCLIr.Result.Runs) != 1 {
		t.Fatalf("comm: %d and %d runs", len(cr.Result.Runs), len(cCLIr.Result.Runs))
	}
	c, cCLI := cr.Result.Runs[0], cCLIr.Result.Runs[0]
	if len(c.Nodes) != 3 || len(c.Nodes) != len(cCLI.Nodes) {
		t.Fatalf("comm: %d and %d nodes", len(c.Nodes), len(cCLI.Nodes))
	}
	for i := range c.Nodes {
		if c.Nodes[i] != cCLI.Nodes[i] {
			t.Errorf("comm node %d: report %+v, command %+v", i, c.Nodes[i], cCLI.Nodes[i])
		}
	}
	var me struct {
		Result mentropy.Result `json:"result"`
	}
	readJSONFile(t, filepath.Join(dir, "mentropy.json"), &me)
	meCLI := mentropyOf(t, mustRun(t, "mentropy", "--json", ring))
	if len(me.Result.Procs) != 4 || len(meCLI.Procs) != 4 {
		t.Fatalf("mentropy: %d and %d processes", len(me.Result.Procs), len(meCLI.Procs))
	}
	for i, p := range me.Result.Procs {
		if len(p.HMax) != len(meCLI.Procs[i].Steps) {
			t.Fatalf("mentropy proc %d: %d and %d points", p.Proc, len(p.HMax), len(meCLI.Procs[i].Steps))
		}
		for k, h := range p.HMax {
			if h != meCLI.Procs[i].Steps[k].H {
				t.Errorf("mentropy proc %d event %d: %v in the report, %v from the command", p.Proc, k, h, meCLI.Procs[i].Steps[k].H)
				break
			}
		}
	}

	gz := filepath.Join(t.TempDir(), "gzip.pst")
	mustRun(t, "import", "-o", gz, filepath.Join(examples, "gzip.bb.gz"))
	gdir := filepath.Join(t.TempDir(), "gzip-report")
	mustRun(t, "analyze", "-o", gdir, gz)
	// analyze's phases.json and the command's --json are the same
	// envelope of the same analysis.
	type phasesEnv struct {
		Analysis string `json:"analysis"`
		Result   struct {
			Streams []struct {
				Result struct {
					K      int `json:"k"`
					Phases []struct {
						ID     int     `json:"id"`
						Weight float64 `json:"weight"`
					} `json:"phases"`
				} `json:"result"`
			} `json:"streams"`
		} `json:"result"`
	}
	var ph, phCLI phasesEnv
	readJSONFile(t, filepath.Join(gdir, "phases.json"), &ph)
	if err := json.Unmarshal([]byte(mustRun(t, "phases", "--json", gz)), &phCLI); err != nil {
		t.Fatal(err)
	}
	if ph.Analysis != "phases" || len(ph.Result.Streams) != 1 || len(ph.Result.Streams[0].Result.Phases) == 0 || !reflect.DeepEqual(ph, phCLI) {
		t.Fatalf("phases: report %+v, command %+v", ph, phCLI)
	}
	for _, name := range []string{"phases.png", "phases.svg", "index.html"} {
		if _, err := os.Stat(filepath.Join(gdir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	if _, errOut, code := run(t, "analyze", filepath.Join(examples, "amoeba.srt")); code != 2 || !strings.Contains(errOut, "-o DIR is required") {
		t.Errorf("analyze without -o: exit %d, %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "nope.pst")
	if _, errOut, code := run(t, "analyze", "-o", t.TempDir(), missing); code != 1 || !strings.Contains(errOut, "nope.pst") {
		t.Errorf("analyze of a missing trace: exit %d, %s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "probe.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	if _, errOut, code := run(t, "analyze", "-o", t.TempDir(), "--probe", bad, importRing(t)); code != 1 || !strings.Contains(errOut, "probe.json") {
		t.Errorf("analyze with a bad probe file: exit %d, %s", code, errOut)
	}
	// A failed analysis leaves an existing report as it was.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("old"), 0o644)
	run(t, "analyze", "-o", dir, missing)
	if b, _ := os.ReadFile(filepath.Join(dir, "index.html")); string(b) != "old" {
		t.Error("a failed analyze touched the existing report")
	}
}

// TestAnalyzeSourceDir checks that analyze reads the source files a trace
// names only from inside --source-dir: not the file an absolute path
// names, nor one next to the trace, and nothing at all without the flag.
func TestAnalyzeSourceDir(t *testing.T) {
	dir := t.TempDir()
	outside, src, traces := filepath.Join(dir, "outside"), filepath.Join(dir, "src"), filepath.Join(dir, "traces")
	for _, d := range []string{outside, src, traces} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "root:x:0:0:SECRET\n")
	write(filepath.Join(traces, "ring.f"), "root:x:0:0:SECRET next to the trace\n")
	write(filepath.Join(src, "ring.f"), "c\nc\n      X = 1\n")
	data, err := os.ReadFile(filepath.Join(examples, "ring", "ring.0.trace"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.NewReplacer(`[#100@ring_@"ring.f"]`, `[#100@ring_@"`+secret+`"]`,
		`[#110@ring_@"ring.f"]`, `[#110@ring_@"`+secret+`"]`).Replace(string(data))
	if hostile == string(data) {
		t.Fatal("the loop of the ring example was not found")
	}
	in := filepath.Join(traces, "ring.0.trace")
	write(in, hostile)
	noSecret := func(out string) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(out, "*"))
		if len(files) == 0 {
			t.Fatalf("%s: no report written", out)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("root:x:0:0")) {
				t.Errorf("%s holds a file from outside the source directory", f)
			}
		}
	}
	type sources struct {
		Sources map[string][]string `json:"sources"`
	}
	out := filepath.Join(dir, "plain")
	mustRun(t, "analyze", "-o", out, in)
	noSecret(out)
	var c sources
	readJSONFile(t, filepath.Join(out, "comm.json"), &c)
	if c.Sources != nil {
		t.Errorf("without --source-dir, sources were read: %q", c.Sources)
	}
	out = filepath.Join(dir, "with-src")
	mustRun(t, "analyze", "-o", out, "--source-dir", src, in)
	noSecret(out)
	c = sources{}
	readJSONFile(t, filepath.Join(out, "comm.json"), &c)
	if got := strings.Join(c.Sources["ring.f"], "|"); got != "c|c|      X = 1" || len(c.Sources) != 1 {
		t.Errorf("with --source-dir: sources %q, want only ring.f from %s", c.Sources, src)
	}
}
