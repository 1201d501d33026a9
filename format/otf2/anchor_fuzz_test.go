package otf2

import (
	"bytes"
	"testing"

	"github.com/parscope/parscope/internal/realdata"
)

// FuzzAnchor feeds arbitrary bytes as an anchor file (traces.otf2),
// starting from the real ones in testdata/real/traces/otf2 (Score-P 7.1): parseAnchor must
// return an error located inside the input, or an anchor whose version,
// chunk sizes, substrate and compression are ones the reader supports and
// whose texts are bytes of the input.
func FuzzAnchor(f *testing.F) {
	for _, dir := range []string{"ping-pong-otf2"} {
		b := realdata.Read(f, "traces/otf2/"+dir+"/traces.otf2")
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseAnchor("f.otf2", data)
		if err != nil {
			checkLocated(t, err, len(data))
			return
		}
		if !isAnchor(data) || a.Major < minMajor || a.Major > maxMajor {
			t.Fatalf("accepted version %s of a file starting % x", a.Version(), data[:min(len(data), 8)])
		}
		if a.EventChunkSize < 256 || a.DefChunkSize < 256 || a.EventChunkSize > 1<<30 || a.DefChunkSize > 1<<30 {
			t.Fatalf("accepted chunk sizes %d and %d", a.EventChunkSize, a.DefChunkSize)
		}
		if a.Substrate != 1 || a.Compression > 1 {
			t.Fatalf("accepted substrate %d, compression %d", a.Substrate, a.Compression)
		}
		texts := []string{a.MachineName, a.Creator, a.Description}
		for _, p := range a.Properties {
			texts = append(texts, p[0], p[1])
		}
		for _, s := range texts {
			if !bytes.Contains(data, []byte(s)) {
				t.Fatalf("text %q is not in the input", s)
			}
		}
	})
}
