package web

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parscope/parscope/analysis/compare"
)

// TestServeCompare: /api/compare/{i}/{j} answers compare.Bundles of the
// two bundles as the CLI's --json does, a trace against itself differs
// nowhere, and bad indices, runs and parameters are refused with a JSON
// error.
func TestServeCompare(t *testing.T) {
	s, bs := testServer(t)

	res, body := get(t, s, "/api/compare/0/1?run_a=1&run_b=0")
	wantStatus(t, "compare 0 1", res, body, http.StatusOK, "application/json")
	want, err := compare.Bundles(bs[0], bs[1], 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(compare.Wrap(want))
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != string(wantJSON) {
		t.Errorf("answer differs from compare.Bundles:\n%.300s\nwant\n%.300s", body, wantJSON)
	}
	var env compare.Envelope
	decode(t, body, &env)
	if env.Analysis != "compare" || env.A.Trace != bs[0].Trace || env.A.Run != 1 || env.B.Trace != bs[1].Trace || env.B.Run != 0 {
		t.Errorf("envelope %+v %+v %q", env.A, env.B, env.Analysis)
	}

	for _, target := range []string{"/api/compare/0/0", "/api/compare/1/1?run_a=0&run_b=0"} {
		res, body := get(t, s, target)
		wantStatus(t, target, res, body, http.StatusOK, "application/json")
		var env compare.Envelope
		decode(t, body, &env)
		if len(env.Result.Sections) == 0 {
			t.Errorf("%s: no section", target)
		}
		for _, sec := range env.Result.Sections {
			for _, tb := range sec.Tables {
				for _, r := range tb.Rows {
					if r.Diff != 0 || r.Only != "" {
						t.Errorf("%s: %s / %s: %+v", target, sec.Analysis, tb.Title, r)
					}
				}
			}
		}
	}

	for target, status := range map[string]int{
		"/api/compare/0/3":                  http.StatusNotFound,
		"/api/compare/-1/0":                 http.StatusNotFound,
		"/api/compare/00/1":                 http.StatusNotFound,
		"/api/compare/0":                    http.StatusNotFound,
		"/api/compare/0/1/2":                http.StatusNotFound,
		"/api/compare/":                     http.StatusNotFound,
		"/api/compare/0/1?run_a=999":        http.StatusNotFound,
		"/api/compare/0/1?run_b=2147483647": http.StatusNotFound,
		"/api/compare/0/1?run_a=-1":         http.StatusBadRequest,
		"/api/compare/0/1?run_a=x":          http.StatusBadRequest,
		"/api/compare/0/1?run_b=2147483648": http.StatusBadRequest,
		"/api/compare/0/1?run_a=0&run_a=1":  http.StatusBadRequest,
		"/api/compare/0/1?run=0":            http.StatusBadRequest,
	} {
		res, body := get(t, s, target)
		wantStatus(t, target, res, body, status, "application/json")
	}
}
