package gomez

import (
	"bytes"
	"math"
)

// detectLines is how many record lines Detect examines at most.
const detectLines = 20

// Detect reports whether head, the first bytes of a file, looks like a
// "time block pid" trace: its first record lines (blank and '#' lines
// skipped, at most 20 examined) are all exactly three non-negative integers,
// the first possibly with a fractional part. When head does not end with a
// newline its last line may have been cut and is ignored, unless it is the
// only one. The name is not used.
func (Importer) Detect(name string, head []byte) bool {
	p := newParser(DefaultUnit, 0)
	p.maxPid = math.MaxUint64 // any pid still looks like this format
	seen := 0
	for len(head) > 0 && seen < detectLines {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
			if seen > 0 {
				break // possibly cut short
			}
		}
		kind, _, _, _, _ := p.slow(line)
		switch kind {
		case lineBad:
			return false
		case lineRecord:
			seen++
		}
	}
	return seen > 0
}
