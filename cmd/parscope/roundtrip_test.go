package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
)

// TestRoundTripGolden imports each bundled example, exports every table as
// CSV and compares the files with the goldens under testdata/roundtrip.
func TestRoundTripGolden(t *testing.T) {
	ring, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	for _, tc := range []struct {
		name   string
		inputs []string
		args   []string
	}{
		{"gomez", []string{filepath.Join(examples, "amoeba.srt")}, []string{"--dict", filepath.Join(examples, "amoeba_blocks.txt")}},
		{"annotated", ring, nil},
		{"bbv", []string{filepath.Join(examples, "gzip.bb.gz")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pst := filepath.Join(dir, "t.pst")
			mustRun(t, append(append([]string{"import", "-o", pst}, tc.args...), tc.inputs...)...)
			out := filepath.Join(dir, "csv")
			mustRun(t, "export", "--format", "csv", "-o", out, pst)
			golden := filepath.Join("testdata", "roundtrip", tc.name)
			got, _ := filepath.Glob(filepath.Join(out, "*.csv"))
			if *update {
				os.RemoveAll(golden)
				os.MkdirAll(golden, 0o755)
				for _, f := range got {
					data, _ := os.ReadFile(f)
					os.WriteFile(filepath.Join(golden, filepath.Base(f)), data, 0o644)
				}
			}
			want, _ := filepath.Glob(filepath.Join(golden, "*.csv"))
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%d tables exported, %d golden", len(got), len(want))
			}
			for _, w := range want {
				wd, _ := os.ReadFile(w)
				gd, err := os.ReadFile(filepath.Join(out, filepath.Base(w)))
				if err != nil {
					t.Fatal(err)
				}
				if string(gd) != string(wd) {
					t.Errorf("%s differs from %s (run with -update to accept)", filepath.Base(w), w)
				}
			}
		})
	}
}

// TestBBVRoundTrip checks the exported bbv table against the .bb file,
// parsed here independently of the importer.
func TestBBVRoundTrip(t *testing.T) {
	src := filepath.Join(examples, "gzip.bb.gz")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	interval := 0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "T") {
			continue
		}
		var pairs []string
		for _, p := range strings.Fields(line[1:]) {
			parts := strings.Split(strings.TrimPrefix(p, ":"), ":")
			pairs = append(pairs, fmt.Sprintf("%d,%s,%s", interval, parts[0], parts[1]))
		}
		want = append(want, pairs...)
		interval++
	}
	if interval != 383 {
		t.Fatalf("the example has %d intervals, want 383", interval)
	}
	dir := t.TempDir()
	pst := filepath.Join(dir, "b.pst")
	mustRun(t, "import", "-o", pst, src)
	out := filepath.Join(dir, "bbv.csv")
	mustRun(t, "export", "--format", "csv", "--table", "bbv", "-o", out, pst)
	rows := formattest.ReadCSV(t, out)
	if strings.Join(rows[0], ",") != "run,proc,interval,t,block,count" {
		t.Fatalf("header %v", rows[0])
	}
	var got []string
	for _, r := range rows[1:] {
		if r[0] != "0" || r[1] != "0" {
			t.Fatalf("row %v: want run 0, process 0", r)
		}
		got = append(got, r[2]+","+r[4]+","+r[5])
	}
	// Within an interval the store keeps the file's order of blocks.
	if !slices.Equal(got, want) {
		t.Fatalf("bbv table: %d rows, want %d from the .bb file", len(got), len(want))
	}
	total := int64(0)
	for _, r := range rows[1:] {
		c, _ := strconv.ParseInt(r[5], 10, 64)
		total += c
	}
	if total < 383*2_000_000 || total > 383*2_000_001 {
		t.Fatalf("total count %d: each interval sums to 2,000,000 (or one more)", total)
	}
}
