package main

import (
	"encoding/json"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/show/plot"
)

// commRunJSON is the part of a run of `comm --json`'s result the tests read.
type commRunJSON struct {
	Run           int32  `json:"run"`
	Procs         int    `json:"procs"`
	Decomposition string `json:"decomposition"`
	Matched       int64  `json:"matched"`
	Nodes         []struct {
		Name, Kind     string
		Parent         int
		Entries        int64
		Own, Aggregate struct {
			Bytes, Messages int64
			Degree          int
			Degrees         []int
		}
		WorkingSets *struct {
			Windows, Distinct int
			Sets              []struct{ Pairs [][2]int32 }
		} `json:"working_sets"`
	}
	Problems struct {
		UnmatchedSends int64 `json:"unmatched_sends"`
		UnmatchedRecvs int64 `json:"unmatched_recvs"`
	}
	RankOwn       commRanking `json:"ranking_own"`
	RankAggregate commRanking `json:"ranking_aggregate"`
	Matrices      []struct {
		Aggregate commMatrixJSON `json:"aggregate"`
	} `json:"matrices"`
}

type commRanking struct {
	ByVolume []int `json:"by_volume"`
	ByDegree []int `json:"by_degree"`
}

type commMatrixJSON struct {
	N            int
	Bytes, Count []int64
}

// commJSON is run 0 of `comm --json`, its ranking (alone, or aggregate
// with --aggregate) and its selection (the whole program's aggregate
// matrix without --structure).
type commJSON struct {
	commRunJSON
	Ranking   commRanking
	Selection struct {
		Nodes  []int
		Matrix commMatrixJSON
	}
}

func commRun(t *testing.T, args ...string) commJSON {
	t.Helper()
	var env struct {
		SchemaVersion int `json:"schema_version"`
		Result        struct {
			Runs []commRunJSON `json:"runs"`
		} `json:"result"`
		Selection []struct {
			Run    int32
			Nodes  []int
			Matrix commMatrixJSON
		} `json:"selection"`
	}
	out := mustRun(t, append([]string{"comm", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != engine.SchemaVersion || len(env.Result.Runs) == 0 || env.Result.Runs[0].Run != 0 {
		t.Fatalf("not comm's envelope of run 0: %.300s", out)
	}
	r := commJSON{commRunJSON: env.Result.Runs[0], Ranking: env.Result.Runs[0].RankOwn}
	if slices.Contains(args, "--aggregate") {
		r.Ranking = r.RankAggregate
	}
	r.Selection.Nodes, r.Selection.Matrix = []int{0}, r.Matrices[0].Aggregate
	if len(env.Selection) > 0 {
		if env.Selection[0].Run != 0 {
			t.Fatalf("selection of run %d first", env.Selection[0].Run)
		}
		r.Selection.Nodes, r.Selection.Matrix = env.Selection[0].Nodes, env.Selection[0].Matrix
	}
	return r
}

func importRing(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	pst := filepath.Join(t.TempDir(), "ring.pst")
	mustRun(t, append([]string{"import", "-o", pst}, files...)...)
	return pst
}

func TestCommRing(t *testing.T) {
	pst := importRing(t)
	r := commRun(t, "--unknown-comm-as-world", pst)
	var paths []string
	for i, n := range r.Nodes {
		// The JSON gives each structure's parent, not its path.
		p := ""
		if i > 0 && n.Parent > 0 {
			p = paths[n.Parent] + "/" + n.Name
		} else if i > 0 {
			p = n.Name
		}
		paths = append(paths, p)
	}
	if r.Procs != 4 || r.Decomposition != "linear" || r.Matched != 256 || !slices.Equal(paths, []string{"", "LOOP_100", "LOOP_100/IF_101"}) {
		t.Fatalf("ring: procs %d, %q, matched %d, tree %v", r.Procs, r.Decomposition, r.Matched, paths)
	}
	in := r.Nodes[2]
	if in.Kind != "if" || in.Entries != 256 || in.Own.Messages != 256 || in.Own.Degree != 2 || in.WorkingSets.Windows != 64 || in.WorkingSets.Distinct != 1 ||
		!slices.Equal(in.WorkingSets.Sets[0].Pairs, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 0}}) {
		t.Errorf("IF_101: %+v", in)
	}
	// LOOP_100 alone holds the 8 allreduces: 6 messages each, linear.
	if lp := r.Nodes[1]; lp.Own.Messages != 48 || lp.Own.Bytes != 384 || lp.Aggregate.Degree != 3 || !slices.Equal(lp.Aggregate.Degrees, []int{3, 2, 3, 2}) {
		t.Errorf("LOOP_100: %+v", lp)
	}
	if !slices.Equal(r.Ranking.ByVolume, []int{2, 1}) || !slices.Equal(r.Ranking.ByDegree, []int{1, 2}) {
		t.Errorf("ranking %+v", r.Ranking)
	}
	// The selection: IF_101 alone is the ring, rank → rank+1.
	s := commRun(t, "--unknown-comm-as-world", "--structure", "IF_101", pst).Selection
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			c := s.Matrix.Count[i*4+j]
			if (j == (i+1)%4) != (c == 64) || (j != (i+1)%4 && c != 0) {
				t.Errorf("IF_101 matrix %d>%d: %d messages", i, j, c)
			}
		}
	}
	// Ring decomposition: allreduce in 3→0, 2→3, 1→2, out 0→1, 1→2, 2→3.
	rr := commRun(t, "--unknown-comm-as-world", "--decompose", "ring", "--structure", "#1", pst).Selection.Matrix
	if !slices.Equal(rr.Count, []int64{0, 8, 0, 0, 0, 0, 16, 0, 0, 0, 0, 16, 8, 0, 0, 0}) {
		t.Errorf("ring-decomposed LOOP_100: %v", rr.Count)
	}
	// Aggregate selection of LOOP_100 covers IF_101 too.
	if a := commRun(t, "--unknown-comm-as-world", "--aggregate", "--structure", "LOOP_100", pst).Selection.Matrix; a.Count[1] != 72 || a.Count[4+2] != 64 {
		t.Errorf("aggregate LOOP_100: %v", a.Count)
	}
	// By default the allreduces on the annotated trace's communicator,
	// whose members it does not give, are reported and left out.
	if r := commRun(t, pst); r.Nodes[1].Own.Messages != 0 || !strings.Contains(mustRun(t, "comm", pst), "collectives on communicators of unknown members (left out)  32") {
		t.Errorf("without --unknown-comm-as-world: LOOP_100 own %+v", r.Nodes[1].Own)
	}
	// Text: the tree, the ranking and the matrix table.
	out := mustRun(t, "comm", "--unknown-comm-as-world", pst)
	for _, want := range []string{"  LOOP_100  loop", "    IF_101  if", "64 windows, 1 distinct, 4-4 pairs", "1                LOOP_100/IF_101", "messages sent (row: sender, column: receiver)", "unmatched         0 sends, 0 receives"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if tree := mustRun(t, "comm", "--unknown-comm-as-world", "--tree", pst); strings.Contains(tree, "ranking") || !strings.Contains(tree, "IF_101") {
		t.Errorf("--tree output:\n%s", tree)
	}
}

func TestCommPlot(t *testing.T) {
	pst := importRing(t)
	dir := t.TempDir()
	side := filepath.Join(dir, "side.png")
	mustRun(t, "comm", "--unknown-comm-as-world", "--plot", side, pst)
	f, err := os.Open(side)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Three panels (program, LOOP_100, IF_101) and a colour bar: wider
	// than three squares, and the heat colours black, red (the 64-byte
	// allreduce cells: log10(65)/log10(528193) of the scale) and white occur.
	b := img.Bounds()
	if b.Dx() < 3*b.Dy() {
		t.Errorf("side-by-side image %v", b)
	}
	seen := map[color.RGBA]bool{}
	red := false
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			red = red || (c.R > 230 && c.G == 0 && c.B == 0)
		}
	}
	if !red {
		t.Error("no red cells in the heat map")
	}
	for _, c := range []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}} {
		if !seen[c] {
			t.Errorf("colour %v missing from the heat map", c)
		}
	}
	svg := filepath.Join(dir, "if.svg")
	mustRun(t, "comm", "--unknown-comm-as-world", "--structure", "IF_101", "--scale", "linear", "--counts", "--plot", svg, pst)
	if data, err := os.ReadFile(svg); err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "messages") {
		t.Errorf("svg: %v %.200s", err, data)
	}
	_, _, code := run(t, "comm", "--unknown-comm-as-world", "--plot", filepath.Join(dir, "x.gif"), pst)
	if _, err := os.Stat(filepath.Join(dir, "x.gif")); code == 0 || err == nil {
		t.Errorf("--plot x.gif: exit %d, file %v", code, err)
	}
}

func TestHeatColor(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want color.RGBA
	}{
		{-1, color.RGBA{0, 0, 0, 255}}, {0, color.RGBA{0, 0, 0, 255}}, {0.5 / 2.4, color.RGBA{128, 0, 0, 255}},
		{1 / 2.4, color.RGBA{255, 0, 0, 255}}, {1.5 / 2.4, color.RGBA{255, 128, 0, 255}}, {2 / 2.4, color.RGBA{255, 255, 0, 255}},
		// The most is pale yellow, not white: it shows on a white page.
		{1, color.RGBA{255, 255, 102, 255}}, {2, color.RGBA{255, 255, 102, 255}},
	} {
		if got := plot.HeatColor(tc.f); got != tc.want {
			t.Errorf("HeatColor(%g) = %v, want %v", tc.f, got, tc.want)
		}
	}
}

func TestCommErrors(t *testing.T) {
	pst := importRing(t)
	for _, args := range [][]string{
		{"--decompose", "star", pst},
		{"--structure", "LOOP_999", pst},
		{"--tree", "--structure", "IF_101", pst},
		{"--scale", "cubic", pst},
	} {
		_, stderr, code := run(t, append([]string{"comm"}, args...)...)
		if code != 2 || stderr == "" {
			t.Errorf("comm %v: exit %d, stderr %q", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"--run", "3"}, {"--runs", "0,3"}} {
		if _, stderr, code := run(t, append(append([]string{"comm"}, args...), pst)...); code != 2 || !strings.Contains(stderr, "no run 3") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if _, stderr, code := run(t, "comm", "--run", "0", "--runs", "0", pst); code != 2 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("--run with --runs: exit %d, %q", code, stderr)
	}
}

// realTrace returns the path of a real trace of testdata/real/traces,
// failing the test when it is missing.
func realTrace(t *testing.T, rel string) string {
	t.Helper()
	return realdata.Path(t, "traces/"+rel)
}

// TestCommPingPong: 2 ranks, sizes doubling from 16 KiB, 8 sends each way
// (16 in all), each inside an MPI_Send region inside main.
func TestCommPingPong(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	pst := filepath.Join(t.TempDir(), "pp.pst")
	mustRun(t, "import", "-o", pst, dir)
	r := commRun(t, "--structure", "MPI_Send", pst)
	const each = 16384 * (1<<8 - 1) // 16 KiB + 32 KiB + ... + 2 MiB
	if m := r.Selection.Matrix; !slices.Equal(m.Count, []int64{0, 8, 8, 0}) || !slices.Equal(m.Bytes, []int64{0, each, each, 0}) {
		t.Errorf("ping-pong MPI_Send matrix %+v", m)
	}
	if r.Matched != 16 || r.Problems.UnmatchedSends != 0 || r.Problems.UnmatchedRecvs != 0 || r.Nodes[0].Aggregate.Degree != 1 {
		t.Errorf("ping-pong: matched %d, problems %+v, program %+v", r.Matched, r.Problems, r.Nodes[0].Aggregate)
	}
}

// TestCommDumpi: 4 ranks pass 4 bytes around a ring (isend to rank+1),
// then a barrier and an allreduce of 4 bytes.
func TestCommDumpi(t *testing.T) {
	meta := realTrace(t, "dumpi/testtrace.meta")
	pst := filepath.Join(t.TempDir(), "d.pst")
	mustRun(t, "import", "-o", pst, meta)
	p2p := commRun(t, "--no-collectives", pst)
	want := []int64{0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 4, 0, 0, 0}
	if m := p2p.Selection.Matrix; !slices.Equal(m.Bytes, want) || p2p.Matched != 4 {
		t.Errorf("dumpi point-to-point %v, matched %d", m.Bytes, p2p.Matched)
	}
	all := commRun(t, "--structure", "MPI_Allreduce", pst)
	// Linear allreduce: 1,2,3 → 0 and 0 → 1,2,3, 4 bytes each.
	if m := all.Selection.Matrix; !slices.Equal(m.Bytes, []int64{0, 4, 4, 4, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0}) {
		t.Errorf("dumpi allreduce %v", m.Bytes)
	}
	bin := commRun(t, "--decompose", "binomial", "--structure", "MPI_Barrier", pst)
	// Binomial tree over 4 from 0: edges 0-1, 0-2, 1-3, in and out; no bytes.
	if m := bin.Selection.Matrix; !slices.Equal(m.Count, []int64{0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0}) || !slices.Equal(m.Bytes, make([]int64, 16)) {
		t.Errorf("dumpi binomial barrier %v", m.Count)
	}
}

// TestCommSourceDir checks that comm prints the selected structures'
// source lines from inside --source-dir only.
func TestCommSourceDir(t *testing.T) {
	pst := importRing(t)
	dir := t.TempDir()
	src, outside := filepath.Join(dir, "src"), filepath.Join(dir, "outside")
	for _, d := range []string{src, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	for i := 1; i <= 110; i++ {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	if err := os.WriteFile(filepath.Join(src, "ring.f"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.f"), []byte(strings.Repeat("SECRET\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	type sources struct {
		Sources []struct {
			Structure, File, Error string
			Line                   int32
			EndLine                int32 `json:"end_line"`
			Lines                  []string
		}
	}
	get := func(args ...string) (sources, string) {
		t.Helper()
		out := mustRun(t, append([]string{"comm", "--json"}, args...)...)
		var s sources
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s, out
	}
	if s, _ := get("--structure", "IF_101", pst); s.Sources != nil {
		t.Errorf("without --source-dir: %+v", s.Sources)
	}
	s, _ := get("--structure", "IF_101", "--structure", "LOOP_100", "--source-dir", src, pst)
	if len(s.Sources) != 2 {
		t.Fatalf("sources: %+v", s.Sources)
	}
	if c := s.Sources[0]; c.Structure != "LOOP_100/IF_101" || c.File != "ring.f" || c.Line != 101 || c.EndLine != 105 ||
		strings.Join(c.Lines, "|") != "line 101|line 102|line 103|line 104|line 105" {
		t.Errorf("IF_101: %+v", c)
	}
	if c := s.Sources[1]; c.Structure != "LOOP_100" || len(c.Lines) != 11 || c.Lines[10] != "line 110" {
		t.Errorf("LOOP_100: %+v", c)
	}
	text := mustRun(t, "comm", "--structure", "IF_101", "--source-dir", src, pst)
	if !strings.Contains(text, "source of LOOP_100/IF_101 (ring.f:101-105)\n  101  line 101\n") {
		t.Errorf("the text does not print the lines:\n%s", text)
	}
	// A region naming a file outside the source directory gets an error,
	// never the file's lines.
	manifest := filepath.Join(pst, "manifest.json")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../outside/secret.f", filepath.Join(outside, "secret.f")} {
		spoilt := strings.ReplaceAll(string(data), `"file": "ring.f"`, `"file": `+strconv.Quote(name))
		if spoilt == string(data) {
			t.Fatal("the manifest names no ring.f")
		}
		if err := os.WriteFile(manifest, []byte(spoilt), 0o644); err != nil {
			t.Fatal(err)
		}
		s, out := get("--structure", "IF_101", "--source-dir", src, pst)
		if strings.Contains(out, "SECRET") || len(s.Sources) != 1 || s.Sources[0].Error == "" || s.Sources[0].Lines != nil {
			t.Errorf("region file %s: %+v", name, s.Sources)
		}
	}
}

// TestCommGolden pins the JSON result of the ring example (docs/results.md
// shows it): the code-structure tree of its one run, rankings and matrices.
func TestCommGolden(t *testing.T) {
	pst := importRing(t)
	js := mustRun(t, "comm", "--unknown-comm-as-world", "--json", pst)
	golden := filepath.Join("testdata", "results", "comm.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("comm --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	r := commRun(t, "--unknown-comm-as-world", pst)
	if r.Procs != 4 || len(r.Nodes) != 3 || r.Nodes[2].Name != "IF_101" || r.Nodes[2].Parent != 1 || r.Selection.Matrix.N != 4 {
		t.Errorf("ring: %+v", r.commRunJSON)
	}
	// --run is --runs of one run, deprecated.
	if a, b := mustRun(t, "comm", "--unknown-comm-as-world", "--json", "--run", "0", pst), mustRun(t, "comm", "--unknown-comm-as-world", "--json", "--runs", "0", pst); a != b || !strings.Contains(a, `"runs": [`) {
		t.Errorf("--run 0 and --runs 0 differ:\n%.300s\n%.300s", a, b)
	}
}

// ringOf writes the example ring trace with its header saying the run has
// procs processes (4 of them record) into a folder, and returns it.
func ringOf(t *testing.T, procs int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ring"+strconv.Itoa(procs))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		head := strings.Replace(first, " of 4", " of "+strconv.Itoa(procs), 1)
		if head == first {
			t.Fatalf("%s: header %q does not say of 4", f, first)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(head+"\n"+rest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCommTooManyProcs runs comm, ocs, analyze and serve on the ring trace
// of 2000 processes, more than comm's dense matrices hold: comm and ocs
// exit 1 with one line saying so, and analyze and serve make the report
// with comm skipped for that reason (they failed on the whole trace).
// analyze and serve read the recorded states only, none: the exact PCA of
// the states derived from the regions of 2000 processes takes long.
func TestCommTooManyProcs(t *testing.T) {
	ring := ringOf(t, 2000)
	const why = "run 0 has 2000 processes, and the dense n×n communication matrices hold at most 1024"
	for _, name := range []string{"comm", "ocs"} {
		out, errOut, code := run(t, name, ring)
		if want := "parscope: ring2000: " + name + " cannot analyse this trace: " + why + "\n"; code != 1 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", name, code, out, errOut, want)
		}
	}
	dir := filepath.Join(t.TempDir(), "report")
	out := mustRun(t, "analyze", "--json", "--states-from", "recorded", "-o", dir, ring)
	var ran struct {
		Ran     []string          `json:"ran"`
		Skipped map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &ran); err != nil {
		t.Fatal(err)
	}
	if ran.Skipped["comm"] != why || slices.Contains(ran.Ran, "comm") || !slices.Contains(ran.Ran, "waitstates") || !slices.Contains(ran.Ran, "profile") {
		t.Errorf("analyze ran %v, skipped %v; want comm skipped: %s", ran.Ran, ran.Skipped, why)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if _, ok := rep["comm"]; ok || !strings.Contains(string(rep["skipped"]), `"comm":"`+why+`"`) {
		t.Errorf("report.json: comm %s, skipped %s", rep["comm"], rep["skipped"])
	}
	if _, err := os.Stat(filepath.Join(dir, "comm.json")); !os.IsNotExist(err) {
		t.Errorf("comm.json: %v, want none", err)
	}

	url, stderr := startServe(t, exec.Command(bin, "serve", "--states-from", "recorded", ring), 1)
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(path string) (int, string) {
		res, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, body := get("api/traces/0"); code != http.StatusOK || !strings.Contains(body, `"comm":"`+why+`"`) {
		t.Errorf("serve: summary %d %s, want comm skipped: %s (stderr %s)", code, body, why, stderr)
	}
	if code, body := get("api/traces/0/comm"); code != http.StatusNotFound || !strings.Contains(body, why) {
		t.Errorf("serve: comm part %d %s, want 404 saying %s", code, body, why)
	}
	if code, _ := get("api/traces/0/waitstates"); code != http.StatusOK {
		t.Errorf("serve: waitstates part %d", code)
	}
}
