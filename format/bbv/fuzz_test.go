package bbv

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks that neither mode panics, that every vector it accepts
// has ids in 1..Dim with Dim the largest id, that strict counts are
// non-negative and finite, and that a strict parse survives a round trip
// through the text format.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"T:1:48 :3:24 :4:12\nT:2:90 :7:8\n",
		"T:2280:4   :2281:2   :2308:6\n\n# Thread 1\n#   Total intervals: 1\n",
		"T\nT:1:1\n",
		"T:1:1\nT:2:2",
		"T x 12 y 3.5 ;4;-1\n",
		"T:1:1e3 :2:.5 :3:7.\r\n",
		"T:0:1\n",
		"T:2147483648:1\n",
		"\x1f\x8b\x08\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var files [2]*File
		for _, quirks := range []bool{false, true} {
			opts := ParseOptions{SimPointQuirks: quirks, MaxDim: 1 << 20}
			file, err := Parse("fuzz", bytes.NewReader(data), opts)
			if err != nil {
				continue
			}
			checkFile(t, file, quirks)
			if quirks {
				files[1] = file
				continue
			}
			files[0] = file
			// Round trip: write the vectors back and parse them again.
			var b bytes.Buffer
			for _, v := range file.Vectors {
				b.WriteByte('T')
				for i := range v.Blocks {
					b.WriteString(":")
					b.WriteString(strconv.Itoa(int(v.Blocks[i])))
					b.WriteString(":")
					b.WriteString(strconv.FormatFloat(v.Counts[i], 'g', -1, 64))
					b.WriteString("   ")
				}
				b.WriteByte('\n')
			}
			again, err := Parse("fuzz", &b, opts)
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			if !reflect.DeepEqual(again.Vectors, file.Vectors) || again.Dim != file.Dim {
				t.Fatalf("round trip changed the vectors")
			}
		}
		// SimPoint's grammar is looser than the strict one, so on a file
		// the strict parser accepts, ending with a newline, both agree.
		if files[0] != nil && !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) &&
			(len(data) == 0 || data[len(data)-1] == '\n') {
			if files[1] == nil || !reflect.DeepEqual(files[0], files[1]) {
				t.Fatalf("strict and quirk parses differ on a well-formed file:\n%+v\n%+v", files[0], files[1])
			}
		}
	})
}

func checkFile(t *testing.T, f *File, quirks bool) {
	t.Helper()
	if len(f.Lines) != len(f.Vectors) {
		t.Fatalf("%d lines for %d vectors", len(f.Lines), len(f.Vectors))
	}
	maxID := int32(0)
	for i, v := range f.Vectors {
		if len(v.Blocks) == 0 || len(v.Blocks) != len(v.Counts) {
			t.Fatalf("vector %d: %d blocks, %d counts", i, len(v.Blocks), len(v.Counts))
		}
		if i > 0 && f.Lines[i] <= f.Lines[i-1] {
			t.Fatalf("line numbers not increasing: %v", f.Lines)
		}
		for j, b := range v.Blocks {
			if b < 1 || b > f.Dim {
				t.Fatalf("vector %d: id %d outside 1..%d", i, b, f.Dim)
			}
			maxID = max(maxID, b)
			c := v.Counts[j]
			if math.IsNaN(c) || math.IsInf(c, 0) {
				t.Fatalf("vector %d: count %v", i, c)
			}
			if !quirks && c < 0 {
				t.Fatalf("strict parse accepted negative count %v", c)
			}
		}
	}
	if maxID != f.Dim {
		t.Fatalf("Dim %d, largest id %d", f.Dim, maxID)
	}
}

// FuzzReadPCFile checks that an exp-bbv pc file never makes ReadPCFile
// panic, that an error names the file and stays short, and that what it
// accepts has distinct positive ids, an address description, a name, and
// reads back the same once written out again.
func FuzzReadPCFile(f *testing.F) {
	for _, s := range []string{
		"F:1:401000:main\nF:2:4010a0:\nF:3:7f00:std::vector<int>::push_back\n",
		"# pc file\n\nF:7:0:a:b:c\r\n",
		"F:1:401000:main\nF:1:401010:main\n",
		"F:1:40g000:main\n",
		"F:0:1:x\n",
		"F:2147483648:1:x\n",
		"G:1:1:x\n",
		"\x1f\x8b\x08\x00",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.pc")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		states, err := ReadPCFile(path)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, path) || len(msg) > len(path)+400 {
				t.Fatalf("error %.500q: want one that names the file, at most 400 bytes more", msg)
			}
			return
		}
		seen := map[int32]bool{}
		var b bytes.Buffer
		for _, s := range states {
			if s.ID < 1 || seen[s.ID] {
				t.Fatalf("block id %d: want distinct positive ids", s.ID)
			}
			seen[s.ID] = true
			addr, ok := strings.CutPrefix(s.Description, "0x")
			if _, err := strconv.ParseUint(addr, 16, 64); !ok || err != nil || s.Name == "" {
				t.Fatalf("state %+v: want a name and an address 0x<hex>", s)
			}
			fmt.Fprintf(&b, "F:%d:%s:%s\n", s.ID, addr, s.Name)
		}
		back := filepath.Join(dir, "back.pc")
		if err := os.WriteFile(back, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := ReadPCFile(back)
		if err != nil || !reflect.DeepEqual(again, states) {
			t.Fatalf("round trip: %v\n got  %+v\n want %+v", err, again, states)
		}
	})
}
