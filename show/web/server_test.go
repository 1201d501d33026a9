package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/report"
)

func testServer(t *testing.T) (*Server, []*report.Bundle) {
	t.Helper()
	bs := orderedBundles(t)
	s, err := NewServer(bs)
	if err != nil {
		t.Fatal(err)
	}
	return s, bs
}

// get sends a request to s and returns the response and its body.
func do(t *testing.T, s http.Handler, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// request is a request as a browser on this machine sends it to a server
// on the loopback interface (httptest's default Host, example.com, is
// refused as DNS rebinding).
func request(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	return r
}

func get(t *testing.T, s http.Handler, target string) (*http.Response, []byte) {
	return do(t, s, request(http.MethodGet, target, nil))
}

func wantStatus(t *testing.T, target string, res *http.Response, body []byte, status int, ctype string) {
	t.Helper()
	if res.StatusCode != status {
		t.Errorf("%s: status %d, want %d (%s)", target, res.StatusCode, status, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, ctype) {
		t.Errorf("%s: content type %q, want %s", target, ct, ctype)
	}
	if status >= 400 {
		var e map[string]string
		if err := json.Unmarshal(body, &e); err != nil || e["error"] == "" {
			t.Errorf("%s: error body %q is not {\"error\": ...}", target, body)
		}
	}
}

func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%v: %.200s", err, body)
	}
}

func TestServeApp(t *testing.T) {
	s, _ := testServer(t)
	for _, c := range []struct{ target, ctype, contains string }{
		{"/", "text/html", `src="assets/app.js"`},
		{"/index.html", "text/html", `src="assets/app.js"`},
		{"/assets/app.js", "text/javascript", "PARSCOPE_DATA"},
		{"/assets/app.css", "text/css", ".card"},
		{"/assets/echarts.min.js", "text/javascript", "echarts"},
		{"/assets/echarts-gl.min.js", "text/javascript", "scatter3D"},
		{"/assets/echarts.LICENSE", "text/plain", "Apache License"},
		{"/assets/echarts-gl.LICENSE", "text/plain", "BSD"},
		{"/assets/README.md", "text/", "npm install"},
	} {
		res, body := get(t, s, c.target)
		wantStatus(t, c.target, res, body, http.StatusOK, c.ctype)
		if !bytes.Contains(body, []byte(c.contains)) {
			t.Errorf("%s: body does not contain %q", c.target, c.contains)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff header", c.target)
		}
	}
	res, body := do(t, s, request(http.MethodHead, "/", nil))
	if res.StatusCode != http.StatusOK || len(body) != 0 {
		t.Errorf("HEAD /: status %d, %d body bytes", res.StatusCode, len(body))
	}
}

func TestServeTraces(t *testing.T) {
	s, bs := testServer(t)
	res, body := get(t, s, "/api/traces")
	wantStatus(t, "/api/traces", res, body, http.StatusOK, "application/json")
	var list []struct {
		Index   int                   `json:"index"`
		Trace   string                `json:"trace"`
		Runs    []overview.RunSummary `json:"runs"`
		Records map[string]int64      `json:"records"`
		Ran     []string              `json:"ran"`
		Skipped map[string]string     `json:"skipped"`
		Entropy *json.RawMessage      `json:"entropy"`
		Extra   map[string]json.Token `json:"-"`
	}
	decode(t, body, &list)
	if len(list) != len(bs) {
		t.Fatalf("%d traces listed, want %d", len(list), len(bs))
	}
	for i, l := range list {
		if l.Index != i || l.Trace != bs[i].Trace || len(l.Runs) != len(bs[i].Runs) || strings.Join(l.Ran, ",") != strings.Join(bs[i].Ran, ",") {
			t.Errorf("trace %d listed as %+v", i, l)
		}
		if l.Entropy != nil {
			t.Errorf("trace %d: the list carries the entropy part", i)
		}
	}
	if list[0].Trace != "amoeba.pst" || len(list[0].Runs) != 5 || list[0].Records["state"] != 17000 {
		t.Errorf("amoeba summary: %+v", list[0])
	}
	res, body = get(t, s, "/api/traces/1")
	wantStatus(t, "/api/traces/1", res, body, http.StatusOK, "application/json")
	var one struct {
		Index   int               `json:"index"`
		Trace   string            `json:"trace"`
		Skipped map[string]string `json:"skipped"`
	}
	decode(t, body, &one)
	// The ring records regions, not states: its states are derived.
	if one.Index != 1 || one.Trace != "ring.pst" || one.Skipped["counters"] != "the trace has no counter records" ||
		one.Skipped["states"] != "" {
		t.Errorf("/api/traces/1: %+v", one)
	}
}

// TestServeParts checks every part of every trace: present parts are the
// bundle's values, absent ones are 404 with the reason.
func TestServeParts(t *testing.T) {
	s, bs := testServer(t)
	for i, b := range bs {
		want, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		decode(t, want, &fields)
		for _, p := range Parts {
			target := "/api/traces/" + string(rune('0'+i)) + "/" + p
			res, body := get(t, s, target)
			if w, ok := fields[p]; ok {
				wantStatus(t, target, res, body, http.StatusOK, "application/json")
				if !bytes.Equal(body, w) {
					t.Errorf("%s: body differs from the bundle's %s", target, p)
				}
			} else {
				wantStatus(t, target, res, body, http.StatusNotFound, "application/json")
			}
		}
	}
	// Values from the bundle, decoded.
	_, body := get(t, s, "/api/traces/0/entropy")
	var env struct {
		Analysis string         `json:"analysis"`
		Result   entropy.Report `json:"result"`
	}
	decode(t, body, &env)
	e, want := env.Result, bs[0].Entropy.Result.(*entropy.Report)
	if env.Analysis != "entropy" || len(e.Runs) != 5 || e.Runs[0].CombEntropy != want.Runs[0].CombEntropy || e.Runs[0].P != 17 || len(e.Subsets.Results) != 15 || e.WindowNS != want.WindowNS {
		t.Errorf("entropy: %d runs, run 0 %+v", len(e.Runs), e.Runs[0].Result)
	}
	_, body = get(t, s, "/api/traces/1/comm")
	var cenv struct {
		Result struct {
			Runs []struct {
				Procs int `json:"procs"`
				Nodes []struct {
					Name      string `json:"name"`
					Aggregate struct {
						Bytes int64 `json:"bytes"`
					} `json:"aggregate"`
				} `json:"nodes"`
			} `json:"runs"`
		} `json:"result"`
		Sources map[string][]string `json:"sources"`
	}
	decode(t, body, &cenv)
	if len(cenv.Result.Runs) != 1 {
		t.Fatalf("comm: %+v", cenv)
	}
	c := cenv.Result.Runs[0]
	if c.Procs != 4 || len(c.Nodes) != 3 || c.Nodes[0].Aggregate.Bytes != bs[1].Comm.Report().Runs[0].Nodes[0].Aggregate.Bytes || c.Nodes[0].Aggregate.Bytes == 0 {
		t.Errorf("comm: %+v", c)
	}
	if lines := cenv.Sources["ring.f"]; len(lines) != 110 || !strings.Contains(lines[101], "MPI_IRECV") {
		t.Errorf("comm: ring.f source has %d lines", len(lines))
	}
	res, body := get(t, s, "/api/traces/0/comm")
	if res.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte("the trace has no send or recv or collective or enter records")) {
		t.Errorf("/api/traces/0/comm: %d %s", res.StatusCode, body)
	}
}

func TestServeOverview(t *testing.T) {
	s, bs := testServer(t)
	sum := func(sl overview.Slice) int64 {
		var n int64
		for _, c := range sl.Counts {
			n += c
		}
		return n
	}
	var sl overview.Slice
	res, body := get(t, s, "/api/traces/0/overview?run=2&max=16")
	wantStatus(t, "overview", res, body, http.StatusOK, "application/json")
	decode(t, body, &sl)
	// Levels have 1024, 256, 64, 16 and 4 windows: the finest with at most 16 is level 3.
	if sl.Run != 2 || len(sl.StartsNS) != 16 || sl.Level != 3 || len(ovOf(t, bs[0]).Runs[2].Levels) != 5 {
		t.Errorf("overview max=16: run %d level %d, %d windows", sl.Run, sl.Level, len(sl.StartsNS))
	}
	if got := sum(sl); got != bs[0].Runs[2].Records {
		t.Errorf("overview of the whole run counts %d records, want %d", got, bs[0].Runs[2].Records)
	}
	// A zoom on the first tenth of the run takes a finer level.
	end := bs[0].Runs[0].EndNS
	_, body = get(t, s, "/api/traces/0/overview?run=0&from=0&to="+itoa64(end/10)+"&max=256")
	var z overview.Slice
	decode(t, body, &z)
	if z.Level >= sl.Level || len(z.StartsNS) > 256 || z.StartsNS[0] != 0 || z.StartsNS[len(z.StartsNS)-1] > end/10 {
		t.Errorf("zoomed overview: level %d, %d windows from %d to %d", z.Level, len(z.StartsNS), z.StartsNS[0], z.StartsNS[len(z.StartsNS)-1])
	}
	if len(z.Counts) != len(z.StartsNS)*len(z.Kinds) {
		t.Errorf("zoomed overview: %d counts for %d windows of %d kinds", len(z.Counts), len(z.StartsNS), len(z.Kinds))
	}
	for _, bad := range []struct {
		query  string
		status int
	}{
		{"run=9", http.StatusNotFound},
		{"run=x", http.StatusBadRequest},
		{"run=-1", http.StatusBadRequest},
		{"max=0", http.StatusBadRequest},
		{"max=100000", http.StatusBadRequest},
		{"from=1e9", http.StatusBadRequest},
		{"path=/etc/passwd", http.StatusBadRequest},
		{"run=0&run=1", http.StatusBadRequest},
	} {
		target := "/api/traces/0/overview?" + bad.query
		res, body := get(t, s, target)
		wantStatus(t, target, res, body, bad.status, "application/json")
	}
}

func itoa64(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestServeRejects(t *testing.T) {
	s, _ := testServer(t)
	for _, target := range []string{
		"/api/traces/3", "/api/traces/-1", "/api/traces/01", "/api/traces/x", "/api/traces/0/nope",
		"/api/traces/0/entropy/more", "/api/trace", "/etc/passwd", "/assets/", "/assets/nope.js",
		"/assets/..%2fweb.go", "/assets/index.html", "/api/traces/99999999999999999999",
	} {
		res, body := get(t, s, target)
		wantStatus(t, target, res, body, http.StatusNotFound, "application/json")
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		res, body := do(t, s, request(m, "/api/traces", nil))
		wantStatus(t, m, res, body, http.StatusMethodNotAllowed, "application/json")
		if res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q", m, res.Header.Get("Allow"))
		}
	}
	res, body := do(t, s, request(http.MethodGet, "/api/traces", strings.NewReader("x")))
	wantStatus(t, "GET with a body", res, body, http.StatusRequestEntityTooLarge, "application/json")
	long := "/api/traces/0/overview?run=0&max=1&from=0" + strings.Repeat("0", MaxURL)
	res, body = get(t, s, long)
	wantStatus(t, "long URL", res, body, http.StatusRequestURITooLong, "application/json")
}

// TestWriteStatic checks the offline report: nothing is loaded from
// elsewhere and the data inlined is the bundle.
func TestWriteStatic(t *testing.T) {
	bs := orderedBundles(t)
	var buf bytes.Buffer
	if err := WriteStatic(&buf, bs[:1]); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{`<script src=`, `<link rel="stylesheet"`, `href="assets`, dataMarker} {
		if strings.Contains(html, bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
	_, after, ok := strings.Cut(html, "window.PARSCOPE_DATA=")
	if !ok {
		t.Fatal("no data in the report")
	}
	data, _, _ := strings.Cut(after, ";</script>")
	var d struct {
		Traces []struct {
			Trace   string `json:"trace"`
			Entropy struct {
				Result entropy.Report `json:"result"`
			} `json:"entropy"`
		} `json:"traces"`
	}
	decode(t, []byte(data), &d)
	if len(d.Traces) != 1 || d.Traces[0].Trace != "amoeba.pst" || len(d.Traces[0].Entropy.Result.Runs) != 5 ||
		d.Traces[0].Entropy.Result.Runs[3].CombEntropy != bs[0].Entropy.Result.(*entropy.Report).Runs[3].CombEntropy {
		t.Errorf("inlined data: %d traces", len(d.Traces))
	}
	for _, lib := range []string{"echarts.min.js", "echarts-gl.min.js", "app.js"} {
		body, err := Assets().Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 200)
		n, _ := io.ReadFull(body, head)
		body.Close()
		if !strings.Contains(html, string(head[:n])) {
			t.Errorf("%s is not inlined", lib)
		}
	}
}

// TestWriteStaticPolicy checks the offline report's Content-Security-
// Policy: a meta element before any script, allowing exactly the inline
// scripts and stylesheet of the report by their SHA-256, with no
// 'unsafe-inline' or 'unsafe-eval' for scripts.
func TestWriteStaticPolicy(t *testing.T) {
	bs := orderedBundles(t)
	var buf bytes.Buffer
	if err := WriteStatic(&buf, bs[:1]); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatchIndex(html)
	if m == nil {
		t.Fatal("the report has no Content-Security-Policy meta element")
	}
	if first := strings.Index(html, "<script"); first < m[0] {
		t.Errorf("the policy comes after the first script")
	}
	policy := html[m[2]:m[3]]
	directives := map[string][]string{}
	for _, d := range strings.Split(policy, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			directives[f[0]] = f[1:]
		}
	}
	hashes := func(re string) []string {
		var out []string
		for _, sm := range regexp.MustCompile(re).FindAllStringSubmatch(html, -1) {
			sum := sha256.Sum256([]byte(sm[1]))
			out = append(out, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
		return out
	}
	scripts := hashes(`(?s)<script>(.*?)</script>`)
	if len(scripts) != 4 { // echarts, echarts-gl, the data, the app
		t.Errorf("%d inline scripts, want 4", len(scripts))
	}
	slices.Sort(scripts)
	if got := slices.Sorted(slices.Values(directives["script-src"])); !slices.Equal(got, scripts) {
		t.Errorf("script-src %s, want the hashes of the inline scripts %s", got, scripts)
	}
	if got, want := strings.Join(directives["style-src-elem"], " "), strings.Join(hashes(`(?s)<style>(.*?)</style>`), " "); got != want || want == "" {
		t.Errorf("style-src-elem %s, want %s", got, want)
	}
	for d, want := range map[string]string{"default-src": "'none'", "base-uri": "'none'", "form-action": "'none'", "img-src": "data:"} {
		if got := strings.Join(directives[d], " "); got != want {
			t.Errorf("%s %q, want %q", d, got, want)
		}
	}
	if strings.Contains(policy, "unsafe-eval") || strings.Contains(strings.Join(directives["script-src"], " "), "unsafe-inline") {
		t.Errorf("the policy allows eval or inline scripts: %s", policy)
	}
	if strings.Contains(html, cspMarker) {
		t.Error("the policy marker is left in the report")
	}
	// The app served by Server has no inline script for its policy to
	// allow: script-src 'self' suffices.
	page, err := fs.ReadFile(Assets(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`<script>|<style>|\son[a-z]+=`).Match(page) {
		t.Error("index.html has an inline script, style or event handler")
	}
}

// TestServeHost checks the defence against DNS rebinding: only loopback
// names and the hosts allowed with AllowHost are answered, others get 421
// and no data.
func TestServeHost(t *testing.T) {
	s, _ := testServer(t)
	s.AllowHost("192.0.2.7:9000")
	s.AllowHost("Viewer.Example.")
	s.AllowHost("2001:DB8::1")
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"localhost", true},
		{"localhost:41213", true},
		{"LOCALHOST.:80", true},
		{"app.localhost:80", true},
		{"127.0.0.1", true},
		{"127.0.0.1:41213", true},
		{"127.3.4.5:80", true},
		{"[::1]", true},
		{"[::1]:41213", true},
		{"192.0.2.7:41213", true},
		{"viewer.example", true},
		{"viewer.example:8080", true},
		{"[2001:db8::1]:80", true},
		{"evil.example", false},
		{"evil.example:41213", false},
		{"localhost.evil.example", false},
		{"127.0.0.1.evil.example", false},
		{"192.0.2.8", false},
		{"10.0.0.1:80", false},
		{"[::2]:80", false},
		{"", false},
	} {
		for _, target := range []string{"/", "/api/traces", "/api/traces/1/comm", "/assets/app.js"} {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			r.Host = c.host
			res, body := do(t, s, r)
			if c.ok {
				if res.StatusCode != http.StatusOK {
					t.Errorf("Host %q %s: status %d, want 200 (%s)", c.host, target, res.StatusCode, body)
				}
				continue
			}
			wantStatus(t, "Host "+c.host+" "+target, res, body, http.StatusMisdirectedRequest, "application/json")
			if bytes.Contains(body, []byte("ring")) || bytes.Contains(body, []byte("PARSCOPE")) {
				t.Errorf("Host %q %s: the refusal carries data: %.200s", c.host, target, body)
			}
		}
	}
}

// TestServeSecurityHeaders checks the headers of every kind of answer,
// errors included.
func TestServeSecurityHeaders(t *testing.T) {
	s, _ := testServer(t)
	want := map[string]string{
		"Content-Security-Policy": ServeCSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for _, target := range []string{"/", "/assets/app.js", "/api/traces", "/api/traces/1/comm", "/api/traces/9", "/nowhere"} {
		res, _ := get(t, s, target)
		for k, v := range want {
			if got := res.Header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", target, k, got, v)
			}
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil) // Host example.com
	res, _ := do(t, s, r)
	if res.Header.Get("Content-Security-Policy") != ServeCSP || res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("refused request: status %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	// The policy: no inline script, no eval, no framing, nothing from
	// another origin.
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"} {
		if !strings.Contains(ServeCSP, d) {
			t.Errorf("the policy has no %q", d)
		}
	}
	for _, bad := range []string{"unsafe-eval", "script-src 'self' 'unsafe-inline'", "*", "http:", "https:"} {
		if strings.Contains(ServeCSP, bad) {
			t.Errorf("the policy allows %q", bad)
		}
	}
}

// ovOf returns the overview result of b.
func ovOf(t testing.TB, b *report.Bundle) *overview.Result {
	t.Helper()
	ov, ok := b.OverviewResult()
	if !ok {
		t.Fatal("no overview section")
	}
	return ov
}
