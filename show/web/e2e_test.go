package web

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

var updateScreens = flag.Bool("update-screens", false, "write the screenshots of the views to docs/img/ui-*.png")

// browser starts headless Chromium and returns a context for a new tab
// with the console collector of that tab.
func browser(t *testing.T) (context.Context, *console) {
	t.Helper()
	exe := needtool.Path(t, "chromium", "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	con := &console{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			con.add(m)
		}
	}()
	return ctx, con
}

// console collects the errors and exceptions a page reports.
type console struct {
	mu   sync.Mutex
	errs []string
}

func (c *console) add(m chromedp.ConsoleMessage) {
	if m.IsException() || m.Type == "error" || m.Type == "assert" {
		c.mu.Lock()
		c.errs = append(c.errs, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
		c.mu.Unlock()
	}
}

func (c *console) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.errs
	c.errs = nil
	return e
}

// view is one page of the app to open.
type view struct {
	hash, name string
	// text must appear in the page; " && " separates several texts.
	text string
	// canvases is the least number of chart canvases drawn.
	canvases int
	// action, when set, is JavaScript run once the view is ready (a
	// click), after which text must appear.
	action, after string
}

var views = []view{
	// The note of a drawn overview chart, and the state timeline's title
	// from the states result.
	{"#/t/0/overview", "overview", "windows of && run 0, 1,811 states, 952 distinct classes, every block change drawn", 2, "", ""},
	// The phasespace result's states and points of run 0.
	{"#/t/0/phasespace", "phasespace", "Phase space && run 0: 1,811 of 1,811 states shown", 1, "", ""},
	// The pca result's method and the V shapes of run 0's PC1.
	{"#/t/0/pca", "pca", "PC1 against PC2 && 17 processes, exact method && run 0\t1,811\t22\t1,811", 3, "", ""},
	{"#/t/0/entropy", "entropy", "Histogram entropy per window of 409 µs && adjacent processes (run 0) ranked by how far comb_entropy_distinct && 7,8,9", 2, "", ""},
	{"#/t/0/occupancy", "occupancy", "Mean node occupancy", 2, "", ""},
	{"#/t/1/comm", "comm", "Communication matrix", 1, `document.querySelector('#view label[data-node="2"]').click()`, "CALL MPI_IRECV"},
	{"#/t/1/mentropy", "mentropy", "Modified entropy H per process", 1, "", ""},
	{"#/t/1/probe", "probe", "curve: error against bytes", 5, "", ""},
	{"#/t/2/phases", "phases", "phases over 383 intervals", 3, "", ""},
	{"#/t/1/profile", "profile", "IF_101 holds && Call tree as an icicle", 1, "", ""},
	{"#/t/1/waitstates", "waitstates", "Wait per pattern && Wait per call site", 1, "", ""},
	{"#/t/1/critpath", "critpath", "The critical path of run 0 && Regions on the path", 1, "", ""},
	// The Differences card of package compare (GET /api/compare) above.
	{"#/compare/0/1/overview", "compare", "Differences && overview: run && span_ns && Not compared && Side by side", 2, "", ""},
}

// openView navigates to url, waits until the app has drawn the view, and
// checks the console, the page text, the canvases and the screenshot.
func openView(t *testing.T, ctx context.Context, con *console, url string, v view, shot string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: navigate: %v", v.name, err)
	}
	t0 := time.Now()
	defer func() { t.Logf("%s: %s", v.name, time.Since(t0)) }()
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.view === `+fmt.Sprintf("%q", v.name))); err != nil {
		t.Fatalf("%s: the view never became ready: %v (console: %v)", v.name, err, con.take())
	}
	// Let WebGL draw its first frames.
	if err := chromedp.Do(tctx, chromedp.Sleep(700*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range strings.Split(v.text, " && ") {
		if !strings.Contains(text, want) {
			t.Errorf("%s: the page does not say %q; it says:\n%.600s", v.name, want, text)
		}
	}
	if v.action != "" {
		if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](v.action), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatalf("%s: %s: %v", v.name, v.action, err)
		}
		after, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(after, v.after) {
			t.Errorf("%s: after %s the page does not say %q; it says:\n%.600s", v.name, v.action, v.after, after)
		}
	}
	if strings.Contains(text, "Not available") && v.name != "compare" {
		t.Errorf("%s: the view says it is not available:\n%.600s", v.name, text)
	}
	n, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll("#view canvas").length`))
	if err != nil {
		t.Fatal(err)
	}
	if n < v.canvases {
		t.Errorf("%s: %d chart canvases, want at least %d", v.name, n, v.canvases)
	}
	// The check looks at the window; the documentation gets the whole
	// page (quality 100 makes a PNG).
	shoot := chromedp.CaptureScreenshot()
	if shot != "" {
		shoot = chromedp.FullScreenshot(100)
	}
	buf, err := chromedp.Run(tctx, shoot)
	if err != nil {
		t.Fatal(err)
	}
	checkNotBlank(t, v.name, buf)
	if errs := con.take(); len(errs) > 0 {
		t.Errorf("%s: console errors:\n%s", v.name, strings.Join(errs, "\n"))
	}
	if shot != "" {
		if err := os.WriteFile(shot, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkNotBlank fails when the screenshot is (nearly) one colour: a
// drawn view has many colours and a good share of non-background pixels.
func checkNotBlank(t *testing.T, name string, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", name, err)
	}
	colours, busy, total := countColours(img)
	if colours < 64 || float64(busy)/float64(total) < 0.05 {
		t.Errorf("%s: screenshot looks blank: %d distinct colours, %.1f%% non-background pixels", name, colours, 100*float64(busy)/float64(total))
	}
}

// countColours counts the distinct colours of img and its pixels that
// differ from the page background (#f6f7f9) and from white.
func countColours(img image.Image) (colours, busy, total int) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	rgba, fast := img.(*image.RGBA)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var k uint32
			if fast {
				o := rgba.PixOffset(x, y)
				k = uint32(rgba.Pix[o])<<16 | uint32(rgba.Pix[o+1])<<8 | uint32(rgba.Pix[o+2])
			} else {
				r, g, bl, _ := img.At(x, y).RGBA()
				k = (r>>8)<<16 | (g>>8)<<8 | bl>>8
			}
			seen[k] = true
			total++
			if k != 0xf6f7f9 && k != 0xffffff {
				busy++
			}
		}
	}
	return len(seen), busy, total
}

// TestBrowserServe opens every view of the served example traces in
// headless Chromium.
func TestBrowserServe(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	srv, err := NewServer(orderedBundles(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := browser(t)
	for _, v := range views {
		shot := ""
		if *updateScreens {
			shot = filepath.Join("..", "..", "docs", "img", "ui-"+v.name+".png")
		}
		openView(t, ctx, con, hs.URL+"/"+v.hash, v, shot)
	}
}

// TestBrowserStatic opens the offline report of each example trace from
// file:// (no server) and some of its views.
func TestBrowserStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	ctx, con := browser(t)
	dir := t.TempDir()
	bs := exampleBundles(t)
	for _, c := range []struct {
		trace string
		views []view
	}{
		// The views were all opened by TestBrowserServe; here each report
		// shows that it works offline, with its 2D and 3D charts.
		{"amoeba", []view{views[0], views[1], views[4]}},
		{"ring", []view{{"#/t/0/comm", "comm", "Communication matrix", 1, views[5].action, views[5].after}, {"#/t/0/mentropy", "mentropy", "Modified entropy", 1, "", ""}}},
		{"gzip", []view{{"#/t/0/phases", "phases", "phases over 383 intervals", 3, "", ""}}},
	} {
		path := filepath.Join(dir, c.trace+".html")
		var buf bytes.Buffer
		if err := WriteStatic(&buf, []*report.Bundle{bs[c.trace]}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, v := range c.views {
			openView(t, ctx, con, "file://"+path+v.hash, v, "")
		}
	}
}

// TestBrowserDeepComm opens the comm view of a recursion 20,000 regions
// deep: the structure tree is drawn without recursion (which overflowed
// the browser's stack) and indented by at most maxIndent levels, deeper
// structures saying their depth (indenting each by its depth made text in
// the square of the depth).
func TestBrowserDeepComm(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	const depth = 20_000
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}},
		Regions: []trace.RegionDef{{ID: 0, Label: "f", Kind: trace.RegionFunction, Parent: -1}}}
	var recs []trace.Record
	for i := range int64(depth) {
		recs = append(recs, trace.Enter(0, 0, i, 0))
	}
	recs = append(recs, trace.Send(0, 0, depth, depth, 1, 8, 0, 0), trace.Recv(0, 1, depth, depth, 0, 8, 0, 0))
	for i := range int64(depth) {
		recs = append(recs, trace.Exit(0, 0, depth+1+i, 0))
	}
	b, err := report.FromStore(context.Background(), storetest.New(t, "deep.pst", h, recs), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer([]*report.Bundle{b})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := browser(t)
	openView(t, ctx, con, hs.URL+"/#/t/0/comm", view{"#/t/0/comm", "comm", "Communication matrix && [depth 33] f [function] && " +
		"[depth 20000] f [function] 8 B, 1 msgs, degree 1", 1, `document.querySelector('#view label[data-node="20000"]').click()`, "f/f/f, with nested structures"}, "")
	longest, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.max(...[...document.querySelectorAll('#view .tree label')].map(l => l.textContent.length))`))
	if err != nil {
		t.Fatal(err)
	}
	if longest > 200 {
		t.Errorf("the longest line of the structure tree has %d characters", longest)
	}
}
