package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/analysis/compare"
	"github.com/parscope/parscope/report"
)

// Limits on requests: the server is read-only and answers small GETs.
const (
	// MaxURL is the longest request target accepted (414 beyond).
	MaxURL = 2048
	// MaxHeaderBytes bounds the request headers (http.Server.MaxHeaderBytes).
	MaxHeaderBytes = 16 << 10
	// MaxWindows is the most overview windows one request may ask for.
	MaxWindows = 4096
	// DefaultWindows is the overview windows answered when max is not given.
	DefaultWindows = 256
)

// Server serves the app and the JSON of bundles computed beforehand. The
// traces are addressed by their index in the list given to NewServer; no
// part of a request names a file.
//
// Every answer carries a strict Content-Security-Policy (ServeCSP) and
// answers only requests whose Host is a loopback name or one the server
// was told it is reached by (AllowHost): a page of another site whose name
// the attacker re-points to 127.0.0.1 (DNS rebinding) gets 421.
type Server struct {
	traces  []served
	list    []byte
	files   fs.FS
	started time.Time
	hosts   map[string]bool
	sel     *selector // nil: no trace is analysed again for a selection
}

// ServeCSP is the Content-Security-Policy of every answer of Server: the
// app's scripts and stylesheet come from the server itself, nothing runs
// inline, the page cannot be framed. Inline style attributes are allowed
// because ECharts lays out its tooltips with them; they cannot run code.
const ServeCSP = "default-src 'none'; script-src 'self'; style-src-elem 'self'; style-src-attr 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// AllowHost makes the server also answer requests whose Host header names
// host (a name or an IP address; a port, if any, is ignored). Loopback
// names (localhost, 127.0.0.0/8, ::1) are always allowed; a server bound
// to another address on purpose allows that address with AllowHost.
func (s *Server) AllowHost(host string) {
	if h, ok := normalHost(host); ok {
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		s.hosts[h] = true
	}
}

// normalHost returns the host of a Host header or an address, without its
// port and brackets, lower-cased and without a trailing dot.
func normalHost(hostport string) (string, bool) {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return h, h != ""
}

// hostAllowed reports whether a request with this Host header is for us.
func (s *Server) hostAllowed(hostport string) bool {
	h, ok := normalHost(hostport)
	if !ok {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || s.hosts[h] {
		return true
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || s.hosts[ip.String()]
	}
	return false
}

type served struct {
	bundle  *report.Bundle
	summary []byte
	parts   map[string][]byte
}

// NewServer prepares the JSON answers of every bundle (marshalled once).
// Its answers are those bundles only: a request asking for a selection of
// processes is refused (see NewSelectingServer).
func NewServer(bundles []*report.Bundle) (*Server, error) {
	s := &Server{files: Assets(), started: time.Now(), hosts: map[string]bool{}}
	var list []json.RawMessage
	for i, b := range bundles {
		sv, err := prepare(i, b)
		if err != nil {
			return nil, err
		}
		list = append(list, sv.summary)
		s.traces = append(s.traces, sv)
	}
	var err error
	if s.list, err = json.Marshal(list); err != nil {
		return nil, err
	}
	return s, nil
}

// prepare marshals the answers of bundle b, trace i: its summary and its
// parts.
func prepare(i int, b *report.Bundle) (served, error) {
	full, err := json.Marshal(b)
	if err != nil {
		return served{}, fmt.Errorf("web: trace %d: %w", i, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(full, &fields); err != nil {
		return served{}, err
	}
	sv := served{bundle: b, parts: map[string][]byte{}}
	for _, p := range Parts {
		if v, ok := fields[p]; ok {
			sv.parts[p] = v
			delete(fields, p)
		}
	}
	fields["index"] = json.RawMessage(strconv.Itoa(i))
	if sv.summary, err = json.Marshal(fields); err != nil {
		return served{}, err
	}
	return sv, nil
}

// ServeHTTP answers:
//
//	GET /                               the app
//	GET /assets/NAME                    the app's files
//	GET /api/traces                     the summaries of the traces
//	GET /api/traces/{i}                 the summary of trace i
//	GET /api/traces/{i}/{part}          one part of its bundle (see Parts)
//	GET /api/traces/{i}/overview?run=R&from=NS&to=NS&max=N
//	                                    the overview windows of a time range
//	GET /api/compare/{i}/{j}?run_a=R&run_b=R
//	                                    run run_a of trace i beside run run_b
//	                                    of trace j (compare.Envelope)
//
// The three answers of trace i (its summary, a part, the overview's range
// query) also take a selection (Selection): procs and exclude, lists of
// processes as --procs reads them ("0-7,9"), and states, a source of
// states (auto, recorded, regions, mpi). With any of them, the answer is
// that of the trace analysed again for the selection (a server made by
// NewSelectingServer); without them, or all empty, it is the precomputed
// one. An unknown, repeated or malformed parameter, or a selection the
// trace cannot be analysed for, is answered 400 with the reason; a
// selection asked for after Close, 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", ServeCSP)
	w.Header().Set("X-Frame-Options", "DENY")
	if !s.hostAllowed(r.Host) {
		httpError(w, http.StatusMisdirectedRequest, "host %q is not this server's: it answers loopback names and the address it was bound to", r.Host)
		return
	}
	if len(r.RequestURI) > MaxURL || len(r.URL.RawQuery) > MaxURL {
		httpError(w, http.StatusRequestURITooLong, "request target longer than %d bytes", MaxURL)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "read-only server: %s not allowed", r.Method)
		return
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		httpError(w, http.StatusRequestEntityTooLarge, "requests carry no body")
		return
	}
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		s.file(w, r, "index.html")
	case strings.HasPrefix(p, "/assets/"):
		name := strings.TrimPrefix(p, "/assets/")
		if name == "" || strings.Contains(name, "/") || name != path.Clean(name) || name == "index.html" {
			httpError(w, http.StatusNotFound, "no such asset")
			return
		}
		s.file(w, r, name)
	case p == "/api/traces":
		writeJSONBytes(w, s.list)
	case strings.HasPrefix(p, "/api/traces/"):
		s.api(w, r, strings.Split(strings.TrimPrefix(p, "/api/traces/"), "/"))
	case strings.HasPrefix(p, "/api/compare/"):
		s.compare(w, r, strings.Split(strings.TrimPrefix(p, "/api/compare/"), "/"))
	default:
		httpError(w, http.StatusNotFound, "not found")
	}
}

func (s *Server) file(w http.ResponseWriter, r *http.Request, name string) {
	data, err := fs.ReadFile(s.files, name)
	if err != nil {
		httpError(w, http.StatusNotFound, "no such asset")
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	switch {
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case ct == "":
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	http.ServeContent(w, r, name, s.started, bytes.NewReader(data))
}

func (s *Server) api(w http.ResponseWriter, r *http.Request, parts []string) {
	if len(parts) > 2 {
		httpError(w, http.StatusNotFound, "not found")
		return
	}
	i, ok := s.traceIndex(w, parts[0])
	if !ok {
		return
	}
	t := &s.traces[i]
	part := ""
	if len(parts) == 2 && parts[1] != "" {
		part = parts[1]
		if !slices.Contains(Parts, part) {
			httpError(w, http.StatusNotFound, "no part %q (parts: %s)", part, strings.Join(Parts, ", "))
			return
		}
	}
	q := r.URL.Query()
	var extra []string
	if part == "overview" {
		extra = rangeParams
	}
	sel, key, err := querySelection(q, extra)
	if err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var rg *ovRange
	if part == "overview" && r.URL.RawQuery != "" && !onlySelection(q) {
		v, err := overviewRange(q)
		if err != nil {
			httpError(w, http.StatusBadRequest, "%v", err)
			return
		}
		rg = &v
	}
	if key != "" {
		sv, status, err := s.selected(r.Context(), i, sel, key)
		if err != nil {
			httpError(w, status, "%v", err)
			return
		}
		t = sv
	}
	if part == "" {
		writeJSONBytes(w, t.summary)
		return
	}
	if rg != nil {
		s.overview(w, *rg, t)
		return
	}
	data, ok := t.parts[part]
	if !ok {
		why := t.bundle.Skipped[part]
		if why == "" {
			why = "not computed"
		}
		httpError(w, http.StatusNotFound, "trace %d has no %s: %s", i, part, why)
		return
	}
	writeJSONBytes(w, data)
}

// ovRange is an overview range query: the windows of run between from
// and to (0, 0: the whole run), at most most of them.
type ovRange struct{ run, from, to, most int64 }

// overviewRange reads the range query of q (parameters run, from, to,
// max; the others were checked by querySelection). The error is the text
// of a 400 answer.
func overviewRange(q url.Values) (ovRange, error) {
	// One bad parameter is one error answer: stop at the first.
	const big = 1 << 62
	var rg ovRange
	for _, p := range []struct {
		v           *int64
		name        string
		def, lo, hi int64
	}{{&rg.run, "run", 0, 0, 1<<31 - 1}, {&rg.from, "from", 0, -big, big}, {&rg.to, "to", 0, -big, big}, {&rg.most, "max", DefaultWindows, 1, MaxWindows}} {
		v := q.Get(p.name)
		if v == "" {
			*p.v = p.def
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < p.lo || n > p.hi {
			return rg, fmt.Errorf("overview: %s=%q: want an integer in [%d, %d]", p.name, v, p.lo, p.hi)
		}
		*p.v = n
	}
	return rg, nil
}

// overview answers the range query rg of the overview of t.
func (s *Server) overview(w http.ResponseWriter, rg ovRange, t *served) {
	run, from, to, most := rg.run, rg.from, rg.to, rg.most
	ov, _ := t.bundle.OverviewResult()
	if ov == nil {
		httpError(w, http.StatusNotFound, "no overview")
		return
	}
	sl, ok := ov.Query(int32(run), from, to, int(most))
	if !ok {
		httpError(w, http.StatusNotFound, "overview: no run %d", run)
		return
	}
	data, err := json.Marshal(sl)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSONBytes(w, data)
}

// onlySelection reports whether q, not empty, holds selection parameters
// only: an overview asked for so is the whole part, not a range query.
func onlySelection(q url.Values) bool {
	for k := range q {
		if !slices.Contains(selectionParams, k) {
			return false
		}
	}
	return len(q) > 0
}

// traceIndex returns the trace numbered by the path element v, answering
// 404 when there is none.
func (s *Server) traceIndex(w http.ResponseWriter, v string) (int, bool) {
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= len(s.traces) || strconv.Itoa(i) != v {
		httpError(w, http.StatusNotFound, "no trace %q (traces are numbered 0 to %d)", v, len(s.traces)-1)
		return 0, false
	}
	return i, true
}

// compare answers the comparison of run run_a of trace parts[0] with run
// run_b of trace parts[1] (both runs 0 when not given), computed by
// package compare.
func (s *Server) compare(w http.ResponseWriter, r *http.Request, parts []string) {
	if len(parts) != 2 {
		httpError(w, http.StatusNotFound, "not found (want /api/compare/{i}/{j})")
		return
	}
	i, ok := s.traceIndex(w, parts[0])
	if !ok {
		return
	}
	j, ok := s.traceIndex(w, parts[1])
	if !ok {
		return
	}
	q := r.URL.Query()
	for k, v := range q {
		if (k != "run_a" && k != "run_b") || len(v) != 1 {
			httpError(w, http.StatusBadRequest, "compare: unknown or repeated parameter %q (want run_a, run_b once each)", k)
			return
		}
	}
	var runs [2]int32
	for n, name := range []string{"run_a", "run_b"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		x, err := strconv.ParseInt(v, 10, 32)
		if err != nil || x < 0 {
			httpError(w, http.StatusBadRequest, "compare: %s=%q: want an integer in [0, %d]", name, v, 1<<31-1)
			return
		}
		runs[n] = int32(x)
	}
	res, err := compare.Bundles(s.traces[i].bundle, s.traces[j].bundle, runs[0], runs[1])
	if err != nil {
		httpError(w, http.StatusNotFound, "%v", err)
		return
	}
	data, err := json.Marshal(compare.Wrap(res))
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSONBytes(w, data)
}

func writeJSONBytes(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// httpError answers a JSON error {"error": "..."} with the status.
func httpError(w http.ResponseWriter, status int, format string, args ...any) {
	data, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// NewHTTPServer returns an http.Server for h with parscope's limits.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: MaxHeaderBytes}
}
