// Package web is parscope's browser face: one single-page application
// (plain JavaScript with the vendored ECharts and echarts-gl, no build
// step) that shows report bundles. It is used two ways: Server serves the
// app and answers its JSON endpoints from bundles computed once, and
// WriteStatic inlines the app, its libraries and the bundles into one
// self-contained HTML file that opens offline.
//
// The package only formats: every number comes from package report.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/parscope/parscope/report"
)

//go:embed assets
var assets embed.FS

// Assets returns the files of the app (index.html, app.js, app.css and the
// vendored libraries with their licences).
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	return sub
}

// dataMarker is where WriteStatic puts the inlined bundles in index.html.
const dataMarker = "<!--parscope:data-->"

// cspMarker is where WriteStatic puts the report's Content-Security-Policy
// (a meta element, before any script).
const cspMarker = "<!--parscope:csp-->"

// staticCSP is the Content-Security-Policy of the offline report, whose
// scripts and stylesheet are inline: only the inline scripts and
// stylesheets whose SHA-256 hashes are listed may run or apply (so neither
// an injected script element nor an inline event handler runs), nothing
// is fetched. Inline style attributes are allowed because ECharts lays out
// its tooltips with them; they cannot run code. (frame-ancestors is not
// honoured in a meta element, so it is left to the server's header.)
// scripts and styles are the hashes of their texts (cspHash).
func staticCSP(scripts, styles []string) string {
	return "default-src 'none'; script-src " + strings.Join(scripts, " ") + "; style-src-elem " + strings.Join(styles, " ") +
		"; style-src-attr 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
}

// cspHash returns the CSP source ('sha256-...') of an inline script or
// stylesheet whose text is parts, one after the other: the data script is
// hashed in its pieces, not copied into one string.
func cspHash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "'sha256-" + base64.StdEncoding.EncodeToString(h.Sum(nil)) + "'"
}

// Parts are the sections of a bundle that the app fetches one by one
// (api/traces/{i}/{part}); everything else is the trace's summary.
var Parts = []string{"overview", "states", "entropy", "pca", "phasespace", "occupancy", "mentropy", "comm", "profile", "pop", "waitstates", "critpath", "counters", "phases", "probe"}

// staticData is what the offline report inlines as window.PARSCOPE_DATA.
type staticData struct {
	Traces []*report.Bundle `json:"traces"`
}

// WriteStatic writes the self-contained report of the bundles: index.html
// with the stylesheet, the scripts and the data inlined, so that it opens
// from file:// with no network.
func WriteStatic(w io.Writer, bundles []*report.Bundle) error {
	files := Assets()
	page, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return err
	}
	html := string(page)
	var scripts, styles []string
	inline := func(tag, name, open, close string) error {
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		if bytes.Contains(bytes.ToLower(body), []byte("</"+close)) {
			return fmt.Errorf("web: %s contains </%s and cannot be inlined", name, close)
		}
		if !strings.Contains(html, tag) {
			return fmt.Errorf("web: index.html has no %s", tag)
		}
		html = strings.Replace(html, tag, open+string(body)+"</"+close+">", 1)
		if close == "script" {
			scripts = append(scripts, cspHash(body))
		} else {
			styles = append(styles, cspHash(body))
		}
		return nil
	}
	for _, x := range []struct{ tag, name, open, close string }{
		{`<link rel="stylesheet" href="assets/app.css">`, "app.css", "<style>", "style"},
		{`<script src="assets/echarts.min.js"></script>`, "echarts.min.js", "<script>", "script"},
		{`<script src="assets/echarts-gl.min.js"></script>`, "echarts-gl.min.js", "<script>", "script"},
		{`<script src="assets/app.js"></script>`, "app.js", "<script>", "script"},
	} {
		if err := inline(x.tag, x.name, x.open, x.close); err != nil {
			return err
		}
	}
	// encoding/json escapes <, > and &, so the data cannot close the script.
	// The data (as large as the bundles' JSON) is hashed and written as it
	// is, never copied into the page's text.
	data, err := json.Marshal(staticData{Traces: bundles})
	if err != nil {
		return err
	}
	if !strings.Contains(html, dataMarker) {
		return fmt.Errorf("web: index.html has no data marker")
	}
	const dataOpen, dataClose = "window.PARSCOPE_DATA=", ";"
	scripts = append(scripts, cspHash([]byte(dataOpen), data, []byte(dataClose)))
	if i, j := strings.Index(html, cspMarker), strings.Index(html, "<script"); i < 0 || j < i {
		return fmt.Errorf("web: index.html has no policy marker before its first script")
	}
	meta := `<meta http-equiv="Content-Security-Policy" content="` + staticCSP(scripts, styles) + `">`
	html = strings.Replace(html, cspMarker, meta, 1)
	before, after, _ := strings.Cut(html, dataMarker)
	for _, s := range [][]byte{[]byte(before), []byte("<script>" + dataOpen), data, []byte(dataClose + "</script>"), []byte(after)} {
		if _, err := w.Write(s); err != nil {
			return err
		}
	}
	return nil
}
