package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServe starts parscope serve on two traces, asks the API for them
// and stops it with an interrupt.
func TestServe(t *testing.T) {
	amoeba, ring := importAmoeba(t), importRing(t)
	cmd := exec.Command(bin, "serve", amoeba, ring)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v (%s)", err, stderr.String())
	}
	m := regexp.MustCompile(`serving 2 trace\(s\) at (http://127\.0\.0\.1:\d+/) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Get(m[1] + "api/traces")
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
	res, err = client.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
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
