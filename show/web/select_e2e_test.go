package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSelection types a selection of processes into the page of
// parscope serve, applies it, and checks that the view is that of the
// selection (its heading says it, its lead sentence changed, the server
// was asked), that a selection the server refuses shows the reason in the
// page, and that Reset brings back the first view; no console error.
func TestBrowserSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	// Each build sleeps 1 s, so that the page shows that it is analysing.
	srv, builds := selectingServer(t, time.Second)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, con := browser(t)
	tctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// ready waits until the occupancy view of the selection said (the
	// heading's words, "" for none) is drawn and returns its text.
	ready := func(said string) string {
		t.Helper()
		cond := fmt.Sprintf(`document.body.dataset.ready === "1" && document.body.dataset.view === "occupancy" && (document.body.dataset.selection || "") === %q`, said)
		if _, err := chromedp.Run(tctx, chromedp.Poll[bool](cond)); err != nil {
			t.Fatalf("selection %q: the view never became ready: %v (console: %v)", said, err, con.take())
		}
		text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	lead := func() string {
		t.Helper()
		l, err := chromedp.Run(tctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#view p.lead")).map(p => p.innerText).join(" ")`))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(hs.URL+"/#/t/0/occupancy")); err != nil {
		t.Fatal(err)
	}
	before := ready("")
	leadBefore := lead()
	if !strings.Contains(before, "Occupancy — amoeba.pst\n") {
		t.Errorf("heading of the whole trace: %.200s", before)
	}

	// Type processes 0-1 and apply.
	if err := chromedp.Do(tctx, chromedp.SendKeys("#sel-procs", "0-1"), chromedp.Click("#sel-apply")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.getElementById("view").innerText.includes("Analysing amoeba.pst for processes 0-1…")`)); err != nil {
		t.Errorf("the page does not say that it is analysing the selection: %v", err)
	}
	after := ready("processes 0-1")
	if strings.Contains(after, "Analysing") {
		t.Errorf("the analysing note stays once the view is drawn:\n%.300s", after)
	}
	leadAfter := lead()
	if !strings.Contains(after, "Occupancy — amoeba.pst (processes 0-1)") {
		t.Errorf("the heading does not say the selection:\n%.300s", after)
	}
	if leadAfter == leadBefore || len(leadAfter) < 40 {
		t.Errorf("the lead sentence did not change with the selection: %q", leadAfter)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds after applying one selection, want 1", n)
	}
	t.Logf("lead of every process: %s\nlead of processes 0-1: %s", leadBefore, leadAfter)
	if errs := con.take(); len(errs) > 0 {
		t.Errorf("console errors after applying a selection:\n%s", strings.Join(errs, "\n"))
	}
	// Another view keeps the selection.
	if err := chromedp.Do(tctx, chromedp.Click(`#tabs a[data-view="overview"]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.view === "overview"`)); err != nil {
		t.Fatal(err)
	}
	ov, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ov, "(processes 0-1)") || !strings.Contains(ov, "processes analysed\t0, 1") {
		t.Errorf("the overview does not keep the selection:\n%.600s", ov)
	}
	if err := chromedp.Do(tctx, chromedp.Click(`#tabs a[data-view="occupancy"]`)); err != nil {
		t.Fatal(err)
	}
	if back := ready("processes 0-1"); back != after {
		t.Errorf("back to occupancy, the view differs:\n%.300s\nwant\n%.300s", back, after)
	}

	// A list the server refuses: its reason in the page.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("sel-procs").value = ""`), chromedp.SendKeys("#sel-procs", "1-0"), chromedp.Click("#sel-apply")); err != nil {
		t.Fatal(err)
	}
	refused := ready("processes 1-0")
	if want := `The server refused the selection: procs: "1-0" is not a range lo-hi`; !strings.Contains(refused, want) {
		t.Errorf("the refusal is not shown: want %q in\n%.300s", want, refused)
	}
	// The browser itself logs the failed request; the page writes nothing.
	for _, e := range con.take() {
		if !strings.Contains(e, "status of 400") {
			t.Errorf("console error after a refused selection: %s", e)
		}
	}

	// Reset: the whole trace again, as at first.
	if err := chromedp.Do(tctx, chromedp.Click("#sel-reset")); err != nil {
		t.Fatal(err)
	}
	if again := ready(""); again != before {
		t.Errorf("after Reset the view differs from the first:\n%.300s\nwant\n%.300s", again, before)
	}
	if v, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("sel-procs").value`)); err != nil || v != "" {
		t.Errorf("after Reset the Processes field holds %q (%v)", v, err)
	}
	if errs := con.take(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowserSelectionOffline: an offline report has no server to analyse
// the trace again, so the selection fields are hidden and the views work
// as before.
func TestBrowserSelectionOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	var buf bytes.Buffer
	if err := WriteStatic(&buf, orderedBundles(t)[:1]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "amoeba.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, con := browser(t)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+path+"#/t/0/occupancy")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.body.dataset.ready === "1" && document.body.dataset.view === "occupancy"`)); err != nil {
		t.Fatalf("the view never became ready: %v (console: %v)", err, con.take())
	}
	shown, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`getComputedStyle(document.getElementById("selection")).display !== "none"`))
	if err != nil {
		t.Fatal(err)
	}
	if shown {
		t.Errorf("the offline report shows the selection fields")
	}
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("view").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Occupancy — amoeba.pst\n") || !strings.Contains(text, "of its 17 processes") {
		t.Errorf("the offline occupancy view:\n%.300s", text)
	}
	if errs := con.take(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
