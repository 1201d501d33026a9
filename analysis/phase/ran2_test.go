package phase

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestRan2Golden compares ran2 with the first outputs of SimPoint's own
// Utilities.o (ran2_golden.txt): randFloat printed with %.9g, randInt as
// an integer, each from a fresh generator.
func TestRan2Golden(t *testing.T) {
	f, err := os.Open(dataFile(t, "simpoint-3.2/ran2_golden.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		// "seed 493575226 randFloat: 0.356425047 ..."
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[0] != "seed" {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		seed, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		r := newRan2(seed)
		for i, want := range fields[3:] {
			var got string
			switch fields[2] {
			case "randFloat:":
				got = strconv.FormatFloat(float64(r.float()), 'g', 9, 32)
			case "randInt:":
				got = strconv.FormatInt(r.int(), 10)
			default:
				t.Fatalf("bad golden line %q", sc.Text())
			}
			if got != want {
				t.Errorf("seed %d %s value %d: got %s, want %s", seed, fields[2], i, got, want)
			}
		}
		lines++
	}
	if lines != 10 {
		t.Fatalf("read %d golden lines, want 10", lines)
	}
}

func TestRan2Seeds(t *testing.T) {
	// Seeds s and -s give the same stream for |s| > 1; 0 and -1 too.
	for _, pair := range [][2]int64{{77, -77}, {0, -1}, {2042712918, -2042712918}} {
		a, b := newRan2(pair[0]), newRan2(pair[1])
		for i := 0; i < 100; i++ {
			if x, y := a.float(), b.float(); x != y {
				t.Fatalf("seeds %v differ at %d: %v %v", pair, i, x, y)
			}
		}
	}
	if !newRan2(1).broken || newRan2(2).broken || newRan2(0).broken {
		t.Fatal("only seed 1 is broken")
	}
	// Every value is in [0, 1).
	r := newRan2(12345)
	for i := 0; i < 100000; i++ {
		if v := r.float(); v < 0 || v >= 1 {
			t.Fatalf("value %d = %v", i, v)
		}
	}
}
