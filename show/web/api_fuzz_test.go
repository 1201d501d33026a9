package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/overview"
)

// FuzzAPI sends arbitrary request targets (path and query) with GET, HEAD
// or another method to a server over the example traces of testdata
// (amoeba, ring, gzip). The server must answer without a panic and
// without a 5xx; every error is a JSON {"error": ...}; every JSON answer
// parses; a trace answered is one that exists; and an overview answers at
// most the windows asked for unless it comes from the coarsest level.
func FuzzAPI(f *testing.F) {
	s, err := NewServer(orderedBundles(f))
	if err != nil {
		f.Fatal(err)
	}
	targets := []string{
		"/", "/index.html", "/assets/app.js", "/assets/app.css", "/assets/../server.go", "/assets/",
		"/api/traces", "/api/traces/", "/api/traces/1", "/api/traces/01", "/api/traces/-1", "/api/traces/3",
		"/api/traces/1/overview?run=0&from=0&to=1000000&max=10", "/api/traces/1/overview?run=0&run=1",
		"/api/traces/1/overview?from=9223372036854775807&to=-9223372036854775808&max=4096",
		"/api/traces/0/overview?run=2147483647", "/api/traces/2/overview?max=0", "/api/traces/1/x/y",
		"/api/compare/0/1", "/api/compare/0/0?run_a=1&run_b=0", "/api/compare/2/1?run_a=0&run_b=9",
		"/api/compare/1/3", "/api/compare/0/1?run_a=-1", "/api/compare/0/1?run_b=99999999999", "/api/compare/0/1/",
	}
	for _, p := range Parts {
		targets = append(targets, "/api/traces/1/"+p, "/api/traces/2/"+p)
		// A selection of processes and a source of states reach
		// querySelection and engine.ParseIDsAtMost, and recompute the part.
		targets = append(targets, "/api/traces/1/"+p+"?procs=0-1&exclude=1&states=regions")
	}
	// Selections that are wrong, empty, large or mixed with the overview's
	// range.
	targets = append(targets,
		"/api/traces/0/states?procs=1", "/api/traces/0/profile?exclude=0&states=mpi", "/api/traces/2/?states=recorded",
		"/api/traces/1/overview?procs=0,2-3&run=0&from=0&to=1000&max=8", "/api/traces/1/overview?exclude=0-1",
		"/api/traces/1/states?procs=3-1", "/api/traces/1/states?procs=-1", "/api/traces/1/states?procs=0,,1",
		"/api/traces/1/states?procs=0-4294967296", "/api/traces/1/states?procs=0-99999999", "/api/traces/1/states?procs=x",
		"/api/traces/1/states?procs=0&procs=1", "/api/traces/1/states?exclude=0-3", "/api/traces/1/states?procs=0&exclude=0",
		"/api/traces/1/states?states=bogus", "/api/traces/1/states?states=", "/api/traces/1/states?procs=%20",
		"/api/traces/1/comm?procs=0&max=3", "/api/traces/1/pop?procs=0-1&states=auto",
	)
	for _, target := range targets {
		f.Add(target, uint8(0))
	}
	f.Add("/api/traces", uint8(1))
	f.Add("/api/traces/0", uint8(2))
	f.Fuzz(func(t *testing.T, target string, method uint8) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // net/http answers 400 before any handler runs
		}
		req := &http.Request{Method: []string{http.MethodGet, http.MethodHead, http.MethodPost}[method%3],
			URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "localhost"}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		res := rec.Result()
		body := rec.Body.Bytes()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s: status %d: %s", req.Method, target, res.StatusCode, body)
		}
		if req.Method == http.MethodHead || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			return
		}
		if res.StatusCode >= 400 {
			var e map[string]string
			if err := json.Unmarshal(body, &e); err != nil || e["error"] == "" {
				t.Fatalf("%s: error body %q is not {\"error\": ...}", target, body)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("%s: invalid JSON %.200q", target, body)
		}
		parts := strings.Split(strings.TrimPrefix(u.Path, "/api/traces/"), "/")
		if strings.HasPrefix(u.Path, "/api/traces/") {
			if i, err := strconv.Atoi(parts[0]); err != nil || i < 0 || i >= len(s.traces) {
				t.Fatalf("%s: answered %d for trace %q", target, res.StatusCode, parts[0])
			}
		}
		if len(parts) == 2 && parts[1] == "overview" && u.RawQuery != "" {
			var sl overview.Slice
			if err := json.Unmarshal(body, &sl); err != nil {
				t.Fatal(err)
			}
			most := DefaultWindows
			if m := u.Query().Get("max"); m != "" {
				most, _ = strconv.Atoi(m)
			}
			if len(sl.Counts) != len(sl.StartsNS)*len(sl.Kinds) {
				t.Fatalf("%s: %d windows of %d kinds and %d counts", target, len(sl.StartsNS), len(sl.Kinds), len(sl.Counts))
			}
			// More windows than asked for only from the coarsest level.
			i, _ := strconv.Atoi(parts[0])
			levels := -1
			for _, r := range ovOf(t, s.traces[i].bundle).Runs {
				if r.Run == sl.Run {
					levels = len(r.Levels)
				}
			}
			if len(sl.StartsNS) > most && sl.Level != levels-1 {
				t.Fatalf("%s: %d windows from level %d of %d, at most %d asked for", target, len(sl.StartsNS), sl.Level, levels, most)
			}
		}
	})
}
