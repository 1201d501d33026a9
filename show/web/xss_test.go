package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/report"
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
		x["label"] = markup(fmt.Sprintf("region %d", i))
		x["function"] = markup("function")
		x["file"] = regionFile
	})
	each("events", func(i int, x map[string]any) { x["name"] = markup(fmt.Sprintf("event %d", i)) })
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
// probe) and gzip (basic block vectors), in that order.
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
	} {
		pst, err := importExample(dir, e.name, e.dict, e.inputs...)
		if err != nil {
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

// pageState is what checkNoScript reads from the page.
type pageState struct {
	Pwned    any      `json:"pwned"`
	Title    string   `json:"title"`
	Elements int      `json:"elements"`
	CSP      []string `json:"csp"`
	Text     string   `json:"text"`
}

// checkNoScript opens the view and fails if any injected markup ran, was
// made into elements, or was blocked by the policy (a violation means the
// page tried to run it), or if the console reports an error.
func checkNoScript(t *testing.T, ctx context.Context, con *console, url string, v hostileView) {
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
}

// hostileViews are the views of the markup traces 0 (amoeba), 1 (ring)
// and 2 (gzip) of the served list.
var hostileViews = []hostileView{
	{"#/t/0/overview", "overview", "", `<img src=x onerror="window.__pwned='`},
	{"#/t/0/phasespace", "phasespace", "", ""},
	{"#/t/0/pca", "pca", "", ""},
	{"#/t/0/entropy", "entropy", "", ""},
	{"#/t/0/occupancy", "occupancy", "", `<script>window.__pwned='`},
	{"#/t/1/overview", "overview", "", ""},
	{"#/t/1/comm", "comm", `document.querySelector('#view label[data-node="2"]').click()`, ""},
	{"#/t/1/mentropy", "mentropy", "", ""},
	{"#/t/1/probe", "probe", "", ""},
	{"#/t/2/overview", "overview", "", ""},
	{"#/t/2/phases", "phases", "", ""},
	{"#/compare/0/1/overview", "compare", "", ""},
	{"#/compare/0/1/occupancy", "compare", "", ""},
	{"#/compare/1/2/comm", "compare", "", ""},
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
// through every view served by Server and checks that none of it runs.
func TestBrowserServeMarkupNames(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	srv, err := NewServer(hostileBundles(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := hostileBrowser(t)
	for _, v := range hostileViews {
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
	for i, b := range bs {
		var buf bytes.Buffer
		if err := WriteStatic(&buf, []*report.Bundle{b}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("report%d.html", i))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("#/t/%d/", i)
		for _, v := range hostileViews {
			if !strings.HasPrefix(v.hash, prefix) {
				continue
			}
			v.hash = "#/t/0/" + strings.TrimPrefix(v.hash, prefix)
			checkNoScript(t, ctx, con, "file://"+path+v.hash, v)
		}
	}
}
