package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parscope/parscope/show/web"
)

// startServe starts cmd, a parscope serve of n traces, and returns the
// address it serves at (from the first line it prints) and what it writes
// to its standard error. When the test ends the server, if it has not
// stopped by then, gets a SIGTERM, as kill or a service manager would send,
// and is killed only if it has not stopped 10 s later: a clean stop removes
// the traces it imported on the fly, which a kill leaves in the temporary
// directory.
func startServe(t *testing.T, cmd *exec.Cmd, n int) (string, *strings.Builder) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return // waited for by the test
		}
		cmd.Process.Signal(syscall.SIGTERM)
		stopped := make(chan struct{})
		go func() { cmd.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-stopped
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v (%s)", err, stderr.String())
	}
	m := regexp.MustCompile(fmt.Sprintf(`serving %d trace\(s\) at (http://127\.0\.0\.1:\d+/) `, n)).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	return m[1], stderr
}

// TestServe starts parscope serve on two traces, asks the API for them
// and stops it with an interrupt.
func TestServe(t *testing.T) {
	amoeba, ring := importAmoeba(t), importRing(t)
	cmd := exec.Command(bin, "serve", amoeba, ring)
	url, stderr := startServe(t, cmd, 2)
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Get(url + "api/traces")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var list []struct {
		Index int    `json:"index"`
		Trace string `json:"trace"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list) != 2 || list[0].Trace != "amoeba.pst" || list[1].Trace != "ring.pst" {
		t.Errorf("api/traces: %v %s", err, body)
	}
	res, err = client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res.Header.Get("Content-Security-Policy") != web.ServeCSP {
		t.Errorf("GET /: Content-Security-Policy %q", res.Header.Get("Content-Security-Policy"))
	}
	// A page of another site whose name resolves to this machine (DNS
	// rebinding) gets nothing.
	req, err := http.NewRequest(http.MethodGet, url+"api/traces", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "rebind.example:80"
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(body), "amoeba") {
		t.Errorf("Host rebind.example: status %d, %s", res.StatusCode, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after an interrupt: %v (%s)", err, stderr.String())
	}
}

func TestServeErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pst")
	if _, errOut, code := run(t, "serve", missing); code != 1 || !strings.Contains(errOut, "nope.pst") {
		t.Errorf("serve of a missing trace: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, "serve", "--addr", "256.0.0.1:0", importRing(t)); code != 1 || !strings.Contains(errOut, "256.0.0.1") {
		t.Errorf("serve on a bad address: exit %d, %s", code, errOut)
	}
}

// TestBoundHosts checks the hosts a server bound on purpose to a
// non-loopback address answers besides the loopback names.
func TestBoundHosts(t *testing.T) {
	if got := boundHosts("192.0.2.7:8080", net.ParseIP("192.0.2.7")); !slices.Equal(got, []string{"192.0.2.7", "192.0.2.7"}) {
		t.Errorf("192.0.2.7:8080: %q", got)
	}
	if got := boundHosts("viewer.example:0", net.ParseIP("192.0.2.9")); !slices.Equal(got, []string{"viewer.example", "192.0.2.9"}) {
		t.Errorf("viewer.example:0: %q", got)
	}
	// A wildcard address is reached by the machine's addresses and name.
	got := boundHosts(":0", net.IPv4zero)
	name, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "127.0.0.1") || !slices.Contains(got, name) {
		t.Errorf(":0: %q, want the interface addresses (127.0.0.1 among them) and %q", got, name)
	}
}

// TestServeSelection serves a trace imported on the fly with --procs 0-3:
// the default answers are of processes 0-3, a request's selection is
// analysed again on the trace kept open (its temporary .pst exists while
// the server runs), a bad one answers 400 with the flag parser's words,
// and the temporary .pst is removed when the server stops.
func TestServeSelection(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "serve", "--procs", "0-3", "--dict", filepath.Join(examples, "amoeba_blocks.txt"), filepath.Join(examples, "amoeba.srt"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	url, stderr := startServe(t, cmd, 1)
	pst, _ := filepath.Glob(filepath.Join(tmp, "*", "amoeba.srt"))
	if len(pst) != 1 {
		t.Errorf("while serving, the temporary .pst: %q, want one", pst)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	get := func(target string) (int, map[string]any) {
		t.Helper()
		res, err := client.Get(url + target)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		return res.StatusCode, v
	}
	procs := func(v map[string]any) string { b, _ := json.Marshal(v["procs"]); return string(b) }
	if code, v := get("api/traces/0"); code != 200 || procs(v) != "[0,1,2,3]" || v["trace"] != "amoeba.srt" {
		t.Errorf("default summary: %d procs %s trace %v", code, procs(v), v["trace"])
	}
	if code, v := get("api/traces/0/occupancy?procs=0-1"); code != 200 || procs(v) != "[0,1]" {
		t.Errorf("occupancy?procs=0-1: %d procs %s", code, procs(v))
	}
	if code, v := get("api/traces/0?exclude=2&states=recorded"); code != 200 || procs(v) != "null" || fmt.Sprint(v["exclude_procs"]) != "[2]" || v["states_from"] != "recorded" {
		t.Errorf("summary?exclude=2&states=recorded: %d %v", code, v)
	}
	if code, v := get("api/traces/0/pca?procs=1-0"); code != 400 || v["error"] != `procs: "1-0" is not a range lo-hi` {
		t.Errorf("procs=1-0: %d %v", code, v)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after an interrupt: %v (%s)", err, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*", "amoeba.srt")); len(left) != 0 {
		t.Errorf("after serve stopped, the temporary .pst is left: %q", left)
	}
}

// TestServeStopsOnSIGTERM serves a trace file, which serve imports into a
// temporary .pst, and stops the server with SIGTERM, as kill, systemd or a
// container's stop do: it exits 0 and leaves nothing in the temporary
// directory. Without SIGTERM handled the process died at once and left the
// import behind.
func TestServeStopsOnSIGTERM(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "serve", filepath.Join(examples, "amoeba.srt"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	url, stderr := startServe(t, cmd, 1)
	if res, err := (&http.Client{Timeout: 30 * time.Second}).Get(url + "api/traces"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("serve: %v %v", res, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) == 0 {
		t.Fatalf("serve imported amoeba.srt outside TMPDIR %s: the test would prove nothing", tmp)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v (stderr %s)", err, stderr)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not stop within 20 s of SIGTERM")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("serve left %d entries in TMPDIR after SIGTERM (%s ...)", len(entries), entries[0].Name())
	}
}
