package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// markup is a name full of markup that runs script if a page ever treats
// it as HTML: an img whose error handler, a script element and an svg
// whose load handler set window.__pwned or the document title. what tells
// which name it is.
func markup(what string) string {
	return fmt.Sprintf(`%s <img src=x onerror="window.__pwned='%s'"><script>window.__pwned='%s'</script>"'><svg onload="document.title='pwned %s'">`,
		what, what, what, what)
}

// fileMarkup is markup that can be a file name (no slash).
const fileMarkup = `<img src=x onerror=window.__pwned=1>`

// mpiCall is the start of a region label that names an MPI call.
var mpiCall = regexp.MustCompile(`^P?MPI_[A-Za-z]+ `)

// writeMPITrace writes a trace of 4 processes exchanging messages in a
// ring, each in MPI_Send and MPI_Recv regions (the receive entered before
// the message is sent: late senders) between computation regions, with
// states, events and a counter: what the profile, POP, wait states,
// critical path and counters views need.
func writeMPITrace(t *testing.T, path string) {
	t.Helper()
	const procs, iters = 4, 12
	const (
		rMain = iota
		rCompute
		rSend
		rRecv
	)
	h := &trace.Header{
		Meta:   trace.Meta{ClockResolution: 1},
		Runs:   []trace.RunInfo{{ID: 0, Procs: procs}},
		States: []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "communicate"}},
		Regions: []trace.RegionDef{
			{ID: rMain, Kind: trace.RegionFunction, Label: "main", File: "ring.f", Line: 1, Parent: -1},
			{ID: rCompute, Kind: trace.RegionFunction, Label: "compute", File: "ring.f", Line: 10, Parent: rMain},
			{ID: rSend, Kind: trace.RegionCall, Label: "MPI_Send ", File: "ring.f", Line: 20, Parent: rMain},
			{ID: rRecv, Kind: trace.RegionCall, Label: "MPI_Recv ", File: "ring.f", Line: 21, Parent: rMain},
		},
		Events:   []trace.EventDef{{ID: 0, Name: "iteration"}},
		Counters: []trace.CounterDef{{ID: 0, Name: "PAPI_TOT_INS"}, {ID: 1, Name: "PAPI_L1_DCM"}},
	}
	for p := range int32(procs) {
		h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: p, Name: fmt.Sprintf("rank %d", p)})
	}
	// The send of process p in iteration k starts at sendAt(p, k).
	sendAt := func(p int32, k int) int64 { return int64(k)*10_000 + 3_000 + int64(p)*700 }
	var recs []trace.Record
	for p := range int32(procs) {
		src, dst := (p+procs-1)%procs, (p+1)%procs
		recs = append(recs, trace.Enter(0, p, 0, rMain))
		ins := 0.0
		for k := range iters {
			base, s := int64(k)*10_000, sendAt(p, k)
			ins += float64(1000 * (int(p) + k + 1))
			recs = append(recs, trace.State(0, p, base, 0), trace.Event(0, p, base, 0, int64(k)),
				trace.Counter(0, p, base, 0, ins), trace.Counter(0, p, base, 1, float64(k*int(p+1))),
				trace.Enter(0, p, base, rCompute), trace.Exit(0, p, s, rCompute), trace.State(0, p, s, 1),
				trace.Enter(0, p, s, rSend), trace.Send(0, p, s+1, 0, dst, 1024, int32(k), 0), trace.Exit(0, p, s+50, rSend))
			arrive := max(s+60, sendAt(src, k)+200)
			recs = append(recs, trace.Enter(0, p, s+60, rRecv), trace.Recv(0, p, arrive, 0, src, 1024, int32(k), 0),
				trace.Exit(0, p, arrive+10, rRecv))
		}
		recs = append(recs, trace.Exit(0, p, iters*10_000, rMain))
	}
	storetest.Create(t, path, h, recs)
}

// spoilNames rewrites the header of the .pst at dir so that every name it
// carries (states, regions, events, processes, runs, metadata) is markup.
func spoilNames(dir, regionFile string) error {
	p := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	h := m["header"].(map[string]any)
	each := func(key string, f func(i int, x map[string]any)) {
		list, _ := h[key].([]any)
		for i, x := range list {
			f(i, x.(map[string]any))
		}
	}
	each("states", func(i int, x map[string]any) {
		x["name"] = markup(fmt.Sprintf("state %d", i))
		x["description"] = markup("description")
		x["file"] = fileMarkup
	})
	each("regions", func(i int, x map[string]any) {
		// An MPI call keeps its name before the markup, so that it stays
		// an MPI call for pop and wait states.
		x["label"] = mpiCall.FindString(x["label"].(string)) + markup(fmt.Sprintf("region %d", i))
		x["function"] = markup("function")
		x["file"] = regionFile
	})
	each("events", func(i int, x map[string]any) { x["name"] = markup(fmt.Sprintf("event %d", i)) })
	each("counters", func(i int, x map[string]any) { x["name"] = markup(fmt.Sprintf("counter %d", i)) })
	each("procs", func(i int, x map[string]any) { x["name"] = markup(fmt.Sprintf("process %d", i)) })
	each("runs", func(i int, x map[string]any) { x["name"] = markup(fmt.Sprintf("run %d", i)) })
	meta := h["meta"].(map[string]any)
	meta["source"], meta["program"], meta["host"] = markup("source"), markup("program"), markup("host")
	meta["inputs"] = []string{markup("input")}
	meta["extra"] = map[string]string{markup("key"): markup("value")}
	if data, err = json.Marshal(m); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// hostileBundles analyses the example traces with markup for every name,
// a source file whose name and lines are markup, and a probe result of
// markup: amoeba (states), ring (regions, messages, events, sources,
// probe), gzip (basic block vectors) and the MPI ring of writeMPITrace
// (MPI regions, late senders, counters), in that order.
func hostileBundles(t *testing.T) []*report.Bundle {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i := 1; i <= 120; i++ {
		lines.WriteString(markup(fmt.Sprintf("line %d", i)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(src, fileMarkup+".f"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	probe, err := json.Marshal(map[string]any{markup("probe"): markup("result"), "curve": []map[string]any{
		{"bytes": 100, "error": 0.5, markup("field"): 1}, {"bytes": 200, "error": 0.2, markup("field"): 2}}})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	var out []*report.Bundle
	for _, e := range []struct {
		name, dict string
		inputs     []string
		opts       report.Options
	}{
		{"amoeba", filepath.Join(examples, "amoeba_blocks.txt"), []string{filepath.Join(examples, "amoeba.srt")}, report.Options{}},
		{"ring", "", ring, report.Options{SourceDirs: []string{src}, Probe: probe}},
		{"gzip", "", []string{filepath.Join(examples, "gzip.bb.gz")}, report.Options{}},
		{"mpi", "", nil, report.Options{SourceDirs: []string{src}}},
	} {
		pst := filepath.Join(dir, e.name+".pst")
		if e.inputs == nil {
			writeMPITrace(t, pst)
		} else if _, err := importExample(dir, e.name, e.dict, e.inputs...); err != nil {
			t.Fatal(err)
		}
		if err := spoilNames(pst, fileMarkup+".f"); err != nil {
			t.Fatal(err)
		}
		hostile := filepath.Join(dir, e.name+" "+fileMarkup+".pst")
		if err := os.Rename(pst, hostile); err != nil {
			t.Fatal(err)
		}
		b, err := report.Build(context.Background(), hostile, e.opts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	// The markup reached the bundles: names, sources and the probe.
	if c := out[1].Comm; c == nil || len(c.Sources[fileMarkup+".f"]) != 120 || !strings.Contains(c.Report().Runs[0].Nodes[1].Name, "<img") {
		t.Fatalf("the ring bundle does not carry the markup sources and region names")
	}
	if o := out[0].Occupancy; o == nil || !strings.Contains(o.Result.(*occupancy.Report).Runs[0].Modes[0], "<script>") {
		t.Fatalf("the amoeba bundle does not carry markup mode names")
	}
	for _, a := range []string{"profile", "pop", "waitstates", "critpath", "counters"} {
		if !slices.Contains(out[3].Ran, a) {
			t.Fatalf("the MPI bundle has no %s result (skipped: %s)", a, out[3].Skipped[a])
		}
	}
	return out
}

// guard is run in every document before the page's own scripts: it
// records the Content-Security-Policy violations of the page.
const guard = `window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));`

// showTips makes every chart of the view show its tooltip for the first
// items of each of its series (the tooltips are HTML) and returns the
// text the tooltips showed.
const showTips = `(() => {
  let text = '';
  for (const d of document.querySelectorAll('#view .chart')) {
    const c = echarts.getInstanceByDom(d);
    if (!c) continue;
    (c.getOption().series || []).forEach((s, i) => {
      const n = Math.min(3, (s.data || []).length);
      for (let k = 0; k < n; k++) {
        c.dispatchAction({ type: 'showTip', seriesIndex: i, dataIndex: k });
        text += d.innerText + '\n';
      }
    });
  }
  return text;
})()`

// hostileView is a view to open with the markup traces: after it is ready
// the action (if any) runs, then every chart shows its tooltips.
type hostileView struct {
	hash, name, action string
	// tip is text that a tooltip must show (the markup as text), "" when
	// the view's tooltips show no name.
	tip string
}

// hostileActions are what to do in a view once it is ready, by view: open
// a structure of the communication tree (when the trace has one).
var hostileActions = map[string]string{
	"comm": `document.querySelector('#view label[data-node="2"]')?.click()`,
}

// hostileTips are the texts a tooltip of a view of the amoeba trace must
// show: its names as text.
var hostileTips = map[string]string{
	"overview":  `<img src=x onerror="window.__pwned='`,
	"occupancy": `<script>window.__pwned='`,
}

// hoverTipViews are the views whose charts, hovered over with the mouse,
// must show a trace name (as text) in a tooltip for some markup trace: the
// state timeline of the overview and the profile's icicle.
var hoverTipViews = []string{"overview", "profile"}

// appViews opens url, the overview of a trace, and returns the views the
// app's tabs offer (its own list, VIEWS in app.js) and those of them with
// a result for the trace.
func appViews(t *testing.T, ctx context.Context, con *console, url string) (all, ready []string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: navigate: %v", url, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.view === "overview"`)); err != nil {
		t.Fatalf("%s: the overview never became ready: %v (console: %v)", url, err, con.take())
	}
	tabs, err := chromedp.Run(tctx, chromedp.Evaluate[[]struct {
		View string `json:"view"`
		Off  bool   `json:"off"`
	}](`Array.from(document.querySelectorAll('#tabs a[data-view]')).map(a => ({view: a.dataset.view, off: a.classList.contains('off')}))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range tabs {
		if tab.View == "compare" {
			continue
		}
		all = append(all, tab.View)
		if !tab.Off {
			ready = append(ready, tab.View)
		}
	}
	if len(all) < 14 {
		t.Fatalf("%s: the app offers the views %v", url, all)
	}
	return all, ready
}

// hoverCharts moves the mouse over a grid of points of every chart of the
// view, as a person looking for tooltips would, and returns the text the
// charts showed meanwhile (their tooltips are HTML inside them).
func hoverCharts(ctx context.Context) (string, error) {
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#view .chart').length`))
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for i := range n {
		type rect struct{ X, Y, W, H float64 }
		r, err := chromedp.Run(ctx, chromedp.Evaluate[rect](fmt.Sprintf(`(() => {
  const d = document.querySelectorAll('#view .chart')[%d];
  d.scrollIntoView({block: 'center'});
  const r = d.getBoundingClientRect();
  return {X: r.x, Y: r.y, W: r.width, H: r.height};
})()`, i)))
		if err != nil {
			return "", err
		}
		for gy := 1; gy <= 5; gy++ {
			for gx := 1; gx <= 9; gx++ {
				x, y := r.X+r.W*float64(gx)/10, r.Y+r.H*float64(gy)/6
				if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
					return "", err
				}
				tip, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelectorAll('#view .chart')[%d].innerText`, i)))
				if err != nil {
					return "", err
				}
				text.WriteString(tip + "\n")
			}
		}
	}
	return text.String(), nil
}

// pageState is what checkNoScript reads from the page.
type pageState struct {
	Pwned    any      `json:"pwned"`
	Title    string   `json:"title"`
	Elements int      `json:"elements"`
	CSP      []string `json:"csp"`
	Text     string   `json:"text"`
}

// checkNoScript opens the view, shows the tooltips of its charts (through
// ECharts, then by moving the mouse over them) and fails if any injected
// markup ran, was made into elements, or was blocked by the policy (a
// violation means the page tried to run it), or if the console reports an
// error. It returns the text the hovered charts showed.
func checkNoScript(t *testing.T, ctx context.Context, con *console, url string, v hostileView) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: navigate: %v", v.hash, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.view === `+fmt.Sprintf("%q", v.name))); err != nil {
		t.Fatalf("%s: the view never became ready: %v (console: %v)", v.hash, err, con.take())
	}
	if v.action != "" {
		if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](v.action), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatalf("%s: %s: %v", v.hash, v.action, err)
		}
	}
	// The mouse first, on a page that shows no tooltip yet.
	hover, err := hoverCharts(tctx)
	if err != nil {
		t.Fatalf("%s: hovering over the charts: %v", v.hash, err)
	}
	tips, err := chromedp.Run(tctx, chromedp.Evaluate[string](showTips))
	if err != nil {
		t.Fatalf("%s: tooltips: %v", v.hash, err)
	}
	// Let image errors and handlers fire, if anything made them elements.
	if err := chromedp.Do(tctx, chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	state, err := chromedp.Run(tctx, chromedp.Evaluate[pageState](`({pwned: window.__pwned === undefined ? null : String(window.__pwned), title: document.title,
	   elements: document.querySelectorAll('img[src="x"], [onerror], [onload], #view script, #view svg[onload]').length,
	   csp: window.__csp || ['the guard did not run'], text: document.getElementById('view').innerText})`))
	if err != nil {
		t.Fatalf("%s: %v", v.hash, err)
	}
	if state.Pwned != nil || state.Title != "parscope" {
		t.Errorf("%s: injected script ran: window.__pwned = %v, title %q", v.hash, state.Pwned, state.Title)
	}
	if state.Elements != 0 {
		t.Errorf("%s: %d elements made from trace names", v.hash, state.Elements)
	}
	if len(state.CSP) != 0 {
		t.Errorf("%s: Content-Security-Policy violations: %q", v.hash, state.CSP)
	}
	if !strings.Contains(state.Text, fileMarkup) {
		t.Errorf("%s: the view does not show the trace name as text; it says:\n%.400s", v.hash, state.Text)
	}
	if v.tip != "" && !strings.Contains(tips, v.tip) {
		t.Errorf("%s: no tooltip shows %q; they show:\n%.600s", v.hash, v.tip, tips)
	}
	if errs := con.take(); len(errs) > 0 {
		t.Errorf("%s: console errors:\n%s", v.hash, strings.Join(errs, "\n"))
	}
	return hover
}

// hostileCompares are compare views of the markup traces 0 (amoeba), 1
// (ring), 2 (gzip) and 3 (MPI) of the served list.
var hostileCompares = []hostileView{
	{"#/compare/0/1/overview", "compare", "", ""},
	{"#/compare/0/1/occupancy", "compare", "", ""},
	{"#/compare/1/2/comm", "compare", "", ""},
	{"#/compare/3/1/profile", "compare", "", ""},
	{"#/compare/3/1/waitstates", "compare", "", ""},
	{"#/compare/1/3/critpath", "compare", "", ""},
}

// checkEveryView opens every view the app offers for the trace at base
// (a URL ending in "#/t/I/") that has a result, and returns the views
// opened and, by view, the text its hovered charts showed.
func checkEveryView(t *testing.T, ctx context.Context, con *console, base string, amoeba bool) (all, opened []string, hover map[string]string) {
	t.Helper()
	all, ready := appViews(t, ctx, con, base+"overview")
	hover = map[string]string{}
	for _, key := range ready {
		v := hostileView{hash: base[strings.Index(base, "#"):] + key, name: key, action: hostileActions[key]}
		if amoeba {
			v.tip = hostileTips[key]
		}
		hover[key] = checkNoScript(t, ctx, con, base+key, v)
	}
	return all, ready, hover
}

// checkCovered fails unless every view of the app was opened with a result
// for some markup trace, and unless hovering over the charts of each of
// hoverTipViews showed a trace name as text for some trace.
func checkCovered(t *testing.T, all []string, opened map[string]bool, hover map[string]string) {
	t.Helper()
	for _, key := range all {
		if !opened[key] {
			t.Errorf("view %s: no markup trace has a result for it, so its names were never checked", key)
		}
	}
	for _, key := range hoverTipViews {
		if !strings.Contains(hover[key], "<img src=x onerror=") {
			t.Errorf("view %s: hovering over its charts showed no trace name; they showed:\n%.600s", key, hover[key])
		}
	}
}

// hostileBrowser starts Chromium with the policy guard in every document.
func hostileBrowser(t *testing.T) (context.Context, *console) {
	t.Helper()
	ctx, con := browser(t)
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: guard})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	return ctx, con
}

// TestBrowserServeMarkupNames feeds traces whose every name is markup
// through every view the app offers (the list of its tabs) and the compare
// view, served by Server, and checks that none of it runs.
func TestBrowserServeMarkupNames(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	bs := hostileBundles(t)
	srv, err := NewServer(bs)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := hostileBrowser(t)
	var all []string
	opened, hover := map[string]bool{}, map[string]string{}
	for i := range bs {
		a, ready, h := checkEveryView(t, ctx, con, fmt.Sprintf("%s/#/t/%d/", hs.URL, i), i == 0)
		all = a
		for _, key := range ready {
			opened[key] = true
			hover[key] += h[key]
		}
	}
	checkCovered(t, all, opened, hover)
	for _, v := range hostileCompares {
		checkNoScript(t, ctx, con, hs.URL+"/"+v.hash, v)
	}
}

// TestBrowserStaticMarkupNames does the same with the offline report of
// each markup trace, opened from file://.
func TestBrowserStaticMarkupNames(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	bs := hostileBundles(t)
	ctx, con := hostileBrowser(t)
	dir := t.TempDir()
	var all []string
	opened, hover := map[string]bool{}, map[string]string{}
	for i, b := range bs {
		var buf bytes.Buffer
		if err := WriteStatic(&buf, []*report.Bundle{b}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("report%d.html", i))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		a, ready, h := checkEveryView(t, ctx, con, "file://"+path+"#/t/0/", i == 0)
		all = a
		for _, key := range ready {
			opened[key] = true
			hover[key] += h[key]
		}
	}
	checkCovered(t, all, opened, hover)
}
