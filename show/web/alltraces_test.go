package web

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/report"
)

var viewShots = flag.String("view-shots", "", "TestBrowserEveryView writes a screenshot of each view with a result into this directory")

// recordedExamples are the programs under examples/ that write a trace
// with -o, run with their defaults (each in about a second or less).
var recordedExamples = []string{"amoeba", "cg", "lyon", "masterworker", "mg", "philosophers", "prefix", "transpose"}

// realSamples are the traces of testdata/real that import and analyse in
// about a second each: every trace of every format there.
var realSamples = []struct{ name, path string }{
	{"kineto", "traces/chrome/kineto-before-fix-trace.json"},
	{"viztracer-logging", "traces/chrome/viztracer-logging-integration.json"},
	{"viztracer-multithread", "traces/chrome/viztracer-multithread.json"},
	{"dumpi", "traces/dumpi/testtrace.meta"},
	{"go-annotations", "traces/go/annotations.go1.26.trace"},
	{"go-stress", "traces/go/stress.go1.26.trace"},
	{"go-encoding-json", "traces/go/test-encoding-json.go1.25.trace"},
	{"otf2-ping-pong", "traces/otf2/ping-pong-otf2/traces.otf2"},
	{"otf2-ping-pong-papi", "traces/otf2/ping-pong-otf2-papi/traces.otf2"},
	{"otf2-mi300", "traces/otf2/simple-mi300-example-run/traces.otf2"},
	{"paraver-namd", "traces/paraver/444.namd.prv"},
	{"paraver-lulesh", "traces/paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv"},
	{"paraver-qsort", "traces/paraver/qsort_beo3.prv"},
	{"bbv-bzip2", "bbv/bzip2_rt_100M.bb.gz"},
	{"bbv-phases", "bbv/phases.bb.gz"},
}

// allBundles analyses every example trace (testdata/examples, and the
// traces the example programs record) and the real samples.
func allBundles(t *testing.T) []*report.Bundle {
	t.Helper()
	ex := exampleBundles(t)
	bs := []*report.Bundle{ex["amoeba"], ex["ring"], ex["gzip"]}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, e := range recordedExamples {
		args = append(args, "../../examples/"+e)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	build := func(name, pst string) {
		b, err := report.Build(context.Background(), pst, report.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bs = append(bs, b)
	}
	for _, e := range recordedExamples {
		pst := filepath.Join(dir, e+".pst")
		if out, err := exec.Command(filepath.Join(bin, e), "-o", pst).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", e, err, out)
		}
		build(e, pst)
	}
	for _, r := range realSamples {
		pst, err := importExample(dir, r.name, "", realdata.Path(t, r.path))
		if err != nil {
			t.Fatalf("%s: import: %v", r.path, err)
		}
		build(r.name, pst)
	}
	return bs
}

// emptyCharts is JavaScript that lists the charts of the view that draw no
// data point (by the title of their card), and the error notes shown.
const emptyCharts = `(() => {
  const bad = [];
  for (const d of document.querySelectorAll('#view .chart')) {
    const c = echarts.getInstanceByDom(d), h = d.closest('.card') && d.closest('.card').querySelector('h3');
    const title = h ? h.textContent : '(untitled)';
    if (d.offsetParent === null) continue; // hidden: the view says why in a note
    if (!c) { bad.push('no chart: ' + title); continue; }
    const n = (c.getOption().series || []).reduce((a, s) => a + (s.data ? s.data.length : 0), 0);
    if (n === 0) bad.push('empty chart: ' + title);
  }
  for (const e of document.querySelectorAll('#view .error')) bad.push('error: ' + e.textContent);
  return bad;
})()`

// chartFaults is JavaScript that lists what is unreadable in the 2D charts
// of the view: a value axis whose ticks are not the multiples of one step
// of 1, 2 or 5 × 10^k; an x axis that runs past its line or scatter data;
// a legend box that meets an axis name's box or the plot area; an axis
// label or page number of five digits or more without thousands
// separators.
const chartFaults = `(() => {
  const bad = [];
  const rectOf = el => { const r = el.getBoundingRect().clone(); r.applyTransform(el.getComputedTransform()); return r; };
  const meets = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  const inside = (el, g) => { for (let e = el; e; e = e.parent) if (e === g) return true; return false; };
  const long = /(^|[^\d.,])\d{5,}(?![\d])/;
  for (const d of document.querySelectorAll('#view .chart')) {
    if (d.offsetParent === null) continue;
    const c = echarts.getInstanceByDom(d), m = c && c.getModel();
    if (!m || !m.getComponent('grid')) continue;
    const h = d.closest('.card') && d.closest('.card').querySelector('h3'), title = h ? h.textContent : '(untitled)';
    const series = c.getOption().series || [];
    for (const dim of ['xAxis', 'yAxis']) {
      m.eachComponent(dim, (am, i) => {
        const ax = am.axis;
        if (!ax || am.get('show') === false) return;
        for (const l of ax.getViewLabels()) if (long.test(String(l.formattedLabel))) bad.push(title + ': ' + dim + ' label ' + l.formattedLabel + ' has no thousands separators');
        if (ax.type !== 'value') return;
        if (am.get('show') === false) return;
        const ticks = ax.getViewLabels().map(l => Number(l.tickValue !== undefined ? l.tickValue : l.tick.value)).sort((a, b) => a - b);
        if (ticks.length < 2) { bad.push(title + ': ' + dim + ' has ' + ticks.length + ' tick label(s)'); return; }
        const step = ticks[1] - ticks[0], k = Math.floor(Math.log10(step)), mant = step / Math.pow(10, k);
        if (![1, 2, 5, 10].some(x => Math.abs(mant - x) < 1e-6 * x)) bad.push(title + ': ' + dim + ' ticks ' + ticks.join(' ') + ': step ' + step + ' is not 1, 2 or 5 × 10^k');
        for (let j = 0; j < ticks.length; j++) {
          const q = ticks[j] / step;
          if (Math.abs(q - Math.round(q)) > 1e-6 || (j > 0 && Math.abs(ticks[j] - ticks[j - 1] - step) > 1e-6 * step)) { bad.push(title + ': ' + dim + ' ticks ' + ticks.join(' ') + ' are not the multiples of ' + step); break; }
        }
        if (dim !== 'xAxis') return;
        let lo = Infinity, hi = -Infinity;
        for (const s of series) if ((s.type === 'line' || s.type === 'scatter') && (s.xAxisIndex || 0) === i) for (const p of s.data || []) if (Array.isArray(p)) { lo = Math.min(lo, p[0]); hi = Math.max(hi, p[0]); }
        const ext = ax.scale.getExtent();
        // (Data at one x only get an axis around it.)
        if (hi > lo && ext[1] > hi + 1e-9 * Math.max(1, Math.abs(hi))) bad.push(title + ': x axis runs to ' + ext[1] + ', past its data (' + hi + ')');
      });
    }
    m.eachComponent('visualMap', vm => {
      const cs = (vm.option.inRange && vm.option.inRange.color) || [];
      const top = String(cs[cs.length - 1] || '').toLowerCase();
      if (top === '#fff' || top === '#ffffff' || top === 'white') bad.push(title + ': the largest value is drawn ' + top + ', the colour of the card');
    });
    const legend = m.getComponent('legend');
    if (legend && legend.get('show') !== false) {
      if (legend.get('type') === 'scroll') bad.push(title + ': paginated legend');
      const lv = c.getViewOfComponentModel(legend), lr = rectOf(lv.group);
      const names = [];
      for (const dim of ['xAxis', 'yAxis']) m.eachComponent(dim, am => { if (am.get('name')) names.push(am.get('name')); });
      for (const el of c.getZr().storage.getDisplayList()) {
        // The display list holds a text's spans.
        if ((el.type !== 'text' && el.type !== 'tspan') || inside(el, lv.group) || !names.includes(el.style.text)) continue;
        if (meets(lr, rectOf(el))) bad.push(title + ': the legend covers the axis name ' + el.style.text);
      }
      const g = m.getComponent('grid').coordinateSystem.getRect();
      if (lr.height > 0 && meets(lr, g)) bad.push(title + ': the legend covers the plot area');
    }
  }
  const text = document.getElementById('view').innerText;
  const m = text.match(/(^|[^\d.,#\w-])\d{5,}(?![\d\w])/);
  if (m) bad.push('the page shows ' + m[0].trim() + ' without thousands separators');
  return bad;
})()`

// TestBrowserEveryView opens every view of every example trace and real
// sample in headless Chromium, the views a trace has and those it does
// not (which must say so), and fails on a console error or exception, an
// error note, or a chart without data.
func TestBrowserEveryView(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	bs := allBundles(t)
	srv, err := NewServer(bs)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := browser(t)
	// The views are the app's own tabs, so that a view added to the app is
	// opened here too; and every analysis a report runs or skips has one
	// (the states are drawn in the overview).
	views, _ := appViews(t, ctx, con, hs.URL+"/#/t/0/overview")
	for _, b := range bs {
		names := slices.Clone(b.Ran)
		for name := range b.Skipped {
			names = append(names, name)
		}
		for _, name := range names {
			if name != report.AnalysisStates && !slices.Contains(views, name) {
				t.Errorf("%s: the analysis %s has no view among the app's tabs %v", b.Trace, name, views)
			}
		}
	}
	opened := 0
	for i, b := range bs {
		for _, key := range views {
			hash := fmt.Sprintf("#/t/%d/%s", i, key)
			name := b.Trace + " " + key
			tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			if err := chromedp.Do(tctx, chromedp.Navigate(hs.URL+"/"+hash)); err != nil {
				cancel()
				t.Fatalf("%s: navigate: %v", name, err)
			}
			if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.hash === `+fmt.Sprintf("%q", hash))); err != nil {
				cancel()
				t.Fatalf("%s: the view never became ready: %v (console: %v)", name, err, con.take())
			}
			bad, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](emptyCharts+".concat("+chartFaults+")"))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			// Every analysis view with a result starts by saying in words
			// what it found: a lead paragraph of a sentence or more.
			leadText, err := chromedp.Run(tctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#view p.lead")).map(p => p.innerText).join(" ")`))
			if err == nil && *viewShots != "" && (key == "overview" || slices.Contains(b.Ran, key)) {
				var buf []byte
				if buf, err = chromedp.Run(tctx, chromedp.FullScreenshot(100)); err == nil {
					err = os.WriteFile(filepath.Join(*viewShots, strings.TrimSuffix(b.Trace, ".pst")+"-"+key+".png"), buf, 0o644)
				}
			}
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			ran := key == "overview" || slices.Contains(b.Ran, key)
			if !ran && !strings.Contains(text, "Not available") {
				t.Errorf("%s: the trace has no %s result and the view does not say so:\n%.300s", name, key, text)
			}
			if ran {
				opened++
				if key != "overview" && key != "probe" && !(len(leadText) > 40 && strings.Contains(leadText, ".")) {
					t.Errorf("%s: no sentence says what the analysis found (lead %q)", name, leadText)
				}
			}
			for _, e := range bad {
				t.Errorf("%s: %s", name, e)
			}
			if errs := con.take(); len(errs) > 0 {
				t.Errorf("%s: console errors:\n%s", name, strings.Join(errs, "\n"))
			}
		}
	}
	t.Logf("%d traces, %d views with a result opened", len(bs), opened)
}
