package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
)

// selectingServer serves the example traces amoeba, ring, gzip (0, 1, 2)
// with builders that analyse their stores again, as parscope serve does;
// builds counts the bundles built, and delay, when set, is slept in each
// build (to make requests meet while one is under way).
func selectingServer(t *testing.T, delay time.Duration) (*Server, *atomic.Int64) {
	t.Helper()
	bs := orderedBundles(t)
	var builds atomic.Int64
	var builders []Builder
	for _, name := range []string{"amoeba", "ring", "gzip"} {
		st, err := store.Open(examplesStores[name])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts := examplesOptions[name]
		builders = append(builders, func(ctx context.Context, sel Selection) (*report.Bundle, error) {
			builds.Add(1)
			time.Sleep(delay)
			o := opts
			o.Procs, o.ExcludeProcs, o.States = sel.Procs, sel.Exclude, sel.States
			return report.FromStore(ctx, st, o)
		})
	}
	s, err := NewSelectingServer(context.Background(), bs, builders)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, &builds
}

// occupancyRun0 is run 0 of an answer of the occupancy part.
type occupancyRun0 struct {
	Procs        []int32 `json:"procs"`
	ExcludeProcs []int32 `json:"exclude_procs"`
	Result       struct {
		Runs []struct {
			Procs    int   `json:"procs"`
			AbsentNS int64 `json:"absent_ns"`
			BeginNS  int64 `json:"begin_ns"`
			EndNS    int64 `json:"end_ns"`
		} `json:"runs"`
	} `json:"result"`
}

// TestServeSelectionOccupancy: processes 0-1 of amoeba leave the other 15
// absent, so the occupancy of the selection has far more absent time than
// that of every process; excluding them gives the complement.
func TestServeSelectionOccupancy(t *testing.T) {
	s, builds := selectingServer(t, 0)
	get1 := func(target string) occupancyRun0 {
		t.Helper()
		res, body := get(t, s, target)
		wantStatus(t, target, res, body, http.StatusOK, "application/json")
		var o occupancyRun0
		decode(t, body, &o)
		if len(o.Result.Runs) == 0 {
			t.Fatalf("%s: no run: %.300s", target, body)
		}
		return o
	}
	all := get1("/api/traces/0/occupancy")
	two := get1("/api/traces/0/occupancy?procs=0-1")
	rest := get1("/api/traces/0/occupancy?exclude=1,0")
	if builds.Load() != 2 {
		t.Errorf("%d builds, want 2 (the default answer is precomputed)", builds.Load())
	}
	if !slices.Equal(two.Procs, []int32{0, 1}) || all.Procs != nil || !slices.Equal(rest.ExcludeProcs, []int32{0, 1}) {
		t.Errorf("envelope procs %v, exclude %v; default procs %v", two.Procs, rest.ExcludeProcs, all.Procs)
	}
	a, b, c := all.Result.Runs[0], two.Result.Runs[0], rest.Result.Runs[0]
	t.Logf("all: %+v; procs 0-1: %+v; exclude 0-1: %+v", a, b, c)
	// The 17 processes of amoeba live through the whole run: a selection
	// leaves the others absent the whole span.
	span := a.EndNS - a.BeginNS
	if a.Procs != 17 || a.AbsentNS != 0 || span <= 0 {
		t.Fatalf("every process: %+v, want 17 processes, none absent", a)
	}
	if b.Procs != 17 || b.AbsentNS != 15*span || b.EndNS-b.BeginNS != span {
		t.Errorf("processes 0-1: %+v, want 15 of 17 processes absent %d ns each", b, span)
	}
	if c.Procs != 17 || c.AbsentNS != 2*span {
		t.Errorf("without processes 0-1: %+v, want 2 processes absent %d ns each", c, span)
	}
}

// TestServeSelectionStates: the ring trace records MPI regions; states=mpi
// makes the states come from them, and the summary and the states part
// say so.
func TestServeSelectionStates(t *testing.T) {
	s, _ := selectingServer(t, 0)
	var env struct {
		StatesFrom string `json:"states_from"`
	}
	res, body := get(t, s, "/api/traces/1/states?states=mpi")
	wantStatus(t, "states=mpi", res, body, http.StatusOK, "application/json")
	decode(t, body, &env)
	if env.StatesFrom != "mpi" {
		t.Errorf("states=mpi: the envelope says states_from %q", env.StatesFrom)
	}
	res, body = get(t, s, "/api/traces/1/states")
	wantStatus(t, "default states", res, body, http.StatusOK, "application/json")
	decode(t, body, &env)
	if env.StatesFrom == "mpi" || env.StatesFrom == "" {
		t.Errorf("default: states_from %q, want the source auto picks (not mpi)", env.StatesFrom)
	}
	var sum struct {
		Index      int    `json:"index"`
		StatesFrom string `json:"states_from"`
		Procs      []int  `json:"procs"`
	}
	res, body = get(t, s, "/api/traces/1?states=mpi&procs=0")
	wantStatus(t, "summary", res, body, http.StatusOK, "application/json")
	decode(t, body, &sum)
	if sum.Index != 1 || sum.StatesFrom != "mpi" || !slices.Equal(sum.Procs, []int{0}) {
		t.Errorf("summary of the selection: index %d, states_from %q, procs %v", sum.Index, sum.StatesFrom, sum.Procs)
	}
	// The overview, whole and as a range query, of the selection.
	var ov struct {
		Procs []int `json:"procs"`
	}
	res, body = get(t, s, "/api/traces/1/overview?procs=0")
	wantStatus(t, "overview", res, body, http.StatusOK, "application/json")
	decode(t, body, &ov)
	if !slices.Equal(ov.Procs, []int{0}) {
		t.Errorf("overview?procs=0: envelope procs %v", ov.Procs)
	}
	res, body = get(t, s, "/api/traces/1/overview?procs=0&run=0&max=8")
	wantStatus(t, "overview range", res, body, http.StatusOK, "application/json")
	_, whole := get(t, s, "/api/traces/1/overview?run=0&max=8")
	if bytes.Equal(body, whole) {
		t.Errorf("the windows of process 0 are those of every process: %.200s", body)
	}
}

// TestServeSelectionDefault: without selection parameters (or with them
// empty) every answer is byte for byte that of NewServer.
func TestServeSelectionDefault(t *testing.T) {
	plain, _ := testServer(t)
	s, builds := selectingServer(t, 0)
	targets := []string{"/api/traces", "/api/traces/0", "/api/traces/1/", "/api/traces/0/overview?run=0&from=0&to=100000&max=16",
		"/api/traces/2?procs=&states=", "/api/traces/1/comm?exclude="}
	for _, p := range Parts {
		targets = append(targets, "/api/traces/0/"+p, "/api/traces/1/"+p, "/api/traces/2/"+p)
	}
	for _, target := range targets {
		want := target
		if i := strings.Index(want, "?"); i >= 0 && !strings.Contains(want, "run=") {
			want = want[:i]
		}
		r1, b1 := get(t, plain, want)
		r2, b2 := get(t, s, target)
		if r1.StatusCode != r2.StatusCode || !bytes.Equal(b1, b2) {
			t.Errorf("%s: %d %.100s, want %d %.100s", target, r2.StatusCode, b2, r1.StatusCode, b1)
		}
	}
	if n := builds.Load(); n != 0 {
		t.Errorf("%d builds for default answers", n)
	}
}

// TestServeSelectionRejects: bad selections answer 400 with the reason,
// in the words of the command line's parser.
func TestServeSelectionRejects(t *testing.T) {
	s, builds := selectingServer(t, 0)
	plain, _ := testServer(t)
	for _, c := range []struct {
		srv          *Server
		target, want string
	}{
		{s, "/api/traces/0/occupancy?procs=x", `procs: "x" is not a non-negative number or range`},
		{s, "/api/traces/0?exclude=3-1", `exclude: "3-1" is not a range lo-hi`},
		{s, "/api/traces/0/pca?procs=1,,2", `procs: "" is not a non-negative number or range`},
		{s, "/api/traces/0/pca?states=gpu", `states: states from "gpu": want one of auto, recorded, regions, mpi`},
		{s, "/api/traces/0/pca?procs=0&procs=1", `parameter "procs" given 2 times`},
		{s, "/api/traces/0/pca?proc=0&zz=1", `unknown parameter "proc", "zz" (want procs, exclude, states)`},
		{s, "/api/traces/0?run=0", `unknown parameter "run" (want procs, exclude, states)`},
		{s, "/api/traces/0/overview?procs=0&runs=1", `unknown parameter "runs" (want procs, exclude, states, run, from, to, max)`},
		{s, "/api/traces/0/overview?procs=0&run=-1", `overview: run="-1": want an integer in [0, 2147483647]`},
		{s, "/api/traces/0/overview?procs=0-1048576,0-1048576", `"0-1048576": more than 1048576 numbers in the list`},
		{s, "/api/traces/0/occupancy?procs=0-1048577", `procs: range "0-1048577" is too large`},
		{plain, "/api/traces/0/occupancy?procs=0", "trace 0 cannot be analysed again for a selection here"},
	} {
		res, body := get(t, c.srv, c.target)
		wantStatus(t, c.target, res, body, http.StatusBadRequest, "application/json")
		var e map[string]string
		_ = json.Unmarshal(body, &e)
		if !strings.Contains(e["error"], c.want) {
			t.Errorf("%s: error %q, want it to say %q", c.target, e["error"], c.want)
		}
	}
	if n := builds.Load(); n != 0 {
		t.Errorf("%d builds for rejected requests", n)
	}
	// Selections that parse but that the trace cannot be analysed for: the
	// analyses' reason, computed once.
	for k := range 2 {
		for _, c := range []struct{ target, want string }{
			{"/api/traces/0/occupancy?procs=999", "trace 0 cannot be analysed for procs=999: amoeba.pst: pca: no states to analyse"},
			{"/api/traces/0?states=mpi", "trace 0 cannot be analysed for states=mpi: amoeba.pst: states from mpi need region records, and the trace has none"},
		} {
			res, body := get(t, s, c.target)
			wantStatus(t, c.target, res, body, http.StatusBadRequest, "application/json")
			var e map[string]string
			_ = json.Unmarshal(body, &e)
			if e["error"] != c.want {
				t.Errorf("%s (request %d): error %q, want %q", c.target, k+1, e["error"], c.want)
			}
		}
	}
	if n := builds.Load(); n != 2 {
		t.Errorf("%d builds for two selections the trace refuses, asked twice each; want 2", n)
	}
	long := "/api/traces/0/pca?procs=" + strings.Repeat("1,", MaxURL/2)
	res, body := get(t, s, long)
	wantStatus(t, "long list", res, body, http.StatusRequestURITooLong, "application/json")
}

// TestServeSelectionCache: requests meeting while a selection is computed
// share its one computation; the last MaxSelections selections are kept,
// an older one is computed again.
func TestServeSelectionCache(t *testing.T) {
	s, builds := selectingServer(t, 200*time.Millisecond)
	const n = 8
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Two targets of the same selection, spelled two ways.
			target := "/api/traces/0/occupancy?procs=0-1"
			if k%2 == 1 {
				target = "/api/traces/0/occupancy?procs=" + url.QueryEscape("1, 0,1")
			}
			res, body := get(t, s, target)
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s: %d %s", target, res.StatusCode, body)
			}
			bodies[k] = body
		}()
	}
	wg.Wait()
	if got := builds.Load(); got != 1 {
		t.Fatalf("%d concurrent requests of one selection: %d builds, want 1", n, got)
	}
	for k := 1; k < n; k++ {
		if !bytes.Equal(bodies[k], bodies[0]) {
			t.Errorf("request %d answered differently", k)
		}
	}
	// Another part and the summary of the same selection: no build.
	get(t, s, "/api/traces/0/pca?procs=0-1")
	get(t, s, "/api/traces/0?procs=0,1")
	if got := builds.Load(); got != 1 {
		t.Errorf("other answers of a kept selection: %d builds, want 1", got)
	}
	// MaxSelections more selections push procs=0-1 out.
	for k := range MaxSelections {
		get(t, s, "/api/traces/0/occupancy?exclude="+string(rune('0'+k)))
	}
	if got := builds.Load(); got != 1+MaxSelections {
		t.Errorf("%d builds, want %d", got, 1+MaxSelections)
	}
	get(t, s, "/api/traces/0/occupancy?exclude=3") // the last: kept
	if got := builds.Load(); got != 1+MaxSelections {
		t.Errorf("a kept selection was built again: %d builds", got)
	}
	_, again := get(t, s, "/api/traces/0/occupancy?procs=0-1")
	if got := builds.Load(); got != 2+MaxSelections {
		t.Errorf("a selection pushed out: %d builds, want %d", got, 2+MaxSelections)
	}
	if !bytes.Equal(again, bodies[0]) {
		t.Errorf("the selection computed again differs")
	}
	// After Close no selection is computed; precomputed answers remain.
	s.Close()
	res, body := get(t, s, "/api/traces/0/occupancy?procs=5")
	wantStatus(t, "after Close", res, body, http.StatusServiceUnavailable, "application/json")
	res, body = get(t, s, "/api/traces/0/occupancy")
	wantStatus(t, "default after Close", res, body, http.StatusOK, "application/json")
}
