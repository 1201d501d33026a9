package gomez

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	p := newParser(time.Microsecond, 0)
	tests := []struct {
		line        string
		kind        lineKind
		t           int64
		block, pid  int32
		fastAccepts bool
	}{
		{"0 1 0", lineRecord, 0, 1, 0, true},
		{"123 45 6", lineRecord, 123_000, 45, 6, true},
		{"123\t45\t6", lineRecord, 123_000, 45, 6, true},
		{"123  \t 45 \t6 \t", lineRecord, 123_000, 45, 6, false},
		{"123 45 6 ", lineRecord, 123_000, 45, 6, false},
		{"12345678 45 6", lineRecord, 12_345_678_000, 45, 6, true},
		{"123456789012 45 6", lineRecord, 123_456_789_012_000, 45, 6, true},
		{"1 12345678 12345678", lineBad, 0, 0, 0, false},
		{"1 1234567890 1048575", lineRecord, 1000, 1234567890, 1048575, true},
		{"  123 45 6", lineRecord, 123_000, 45, 6, false},
		{"123 45 6\r", lineRecord, 123_000, 45, 6, false},
		{"1.5 2 3", lineRecord, 1_500, 2, 3, false},
		{"0 2147483647 1048575", lineRecord, 0, 2147483647, 1048575, true},
		{"9223372036854775 1 0", lineRecord, 9223372036854775000, 1, 0, true},
		{"", lineSkip, 0, 0, 0, false},
		{" \t ", lineSkip, 0, 0, 0, false},
		{"#", lineSkip, 0, 0, 0, false},
		{"  # 1 2 3", lineSkip, 0, 0, 0, false},
		{"1 # 2 3", lineBad, 0, 0, 0, false},
		{"1 2", lineBad, 0, 0, 0, false},
		{"1 2 3 4", lineBad, 0, 0, 0, false},
		{"1 2 3x", lineBad, 0, 0, 0, false},
		{"1x 2 3", lineBad, 0, 0, 0, false},
		{"1 2x 3", lineBad, 0, 0, 0, false},
		{"1 2 1048576", lineBad, 0, 0, 0, false},
		{"1 2147483648 0", lineBad, 0, 0, 0, false},
		{"9223372036854776 1 0", lineBad, 0, 0, 0, false},
		{"-0 1 0", lineBad, 0, 0, 0, false},
	}
	for _, tc := range tests {
		kind, tt, b, pid, msg := p.slow([]byte(tc.line))
		if kind != tc.kind || tt != tc.t || b != tc.block || pid != tc.pid {
			t.Errorf("slow(%q) = %d %d %d %d %q, want %d %d %d %d", tc.line, kind, tt, b, pid, msg, tc.kind, tc.t, tc.block, tc.pid)
		}
		if (kind == lineBad) != (msg != "") {
			t.Errorf("slow(%q): kind %d with message %q", tc.line, kind, msg)
		}
		ft, fb, fp, ok := p.fast([]byte(tc.line))
		if ok != tc.fastAccepts {
			t.Errorf("fast(%q) ok = %v, want %v", tc.line, ok, tc.fastAccepts)
		}
		if ok && (ft != tc.t || fb != tc.block || fp != tc.pid) {
			t.Errorf("fast(%q) = %d %d %d, want %d %d %d", tc.line, ft, fb, fp, tc.t, tc.block, tc.pid)
		}
	}
}

// TestFastPastTheEnd checks that digits after the end of a line, in the
// rest of its buffer, are not taken for part of it.
func TestFastPastTheEnd(t *testing.T) {
	p := newParser(time.Microsecond, 0)
	tests := []struct {
		buf        string
		n          int
		ok         bool
		t          int64
		block, pid int32
	}{
		{"5 6 7123456789", 5, true, 5000, 6, 7},
		{"5 6 71234567", 5, true, 5000, 6, 7},
		{"5 6 7\n1234567", 5, true, 5000, 6, 7},
		{"12345 6 7890123456789", 9, true, 12_345_000, 6, 7},
		{"1 234567 8 9 9", 10, true, 1000, 234567, 8},
		{"123456789 1 2", 3, false, 0, 0, 0},
		{"12345678 1 2", 8, false, 0, 0, 0},
		{"1 2 3", 4, false, 0, 0, 0},
	}
	for _, tc := range tests {
		line := []byte(tc.buf)[:tc.n]
		tt, b, pid, ok := p.fast(line)
		if ok != tc.ok || tt != tc.t || b != tc.block || pid != tc.pid {
			t.Errorf("fast(%q in %q) = %d %d %d %v, want %d %d %d %v", line, tc.buf, tt, b, pid, ok, tc.t, tc.block, tc.pid, tc.ok)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	p := newParser(time.Microsecond, 0)
	fast := []byte("123456 12 7")
	frac := []byte("  123456.789 12 7\r")
	var sink int64
	allocs := testing.AllocsPerRun(100, func() {
		t, _, _, _ := p.fast(fast)
		_, t2, _, _, _ := p.slow(frac)
		sink += t + t2
	})
	if allocs != 0 {
		t.Errorf("%v allocations per line, want 0", allocs)
	}
	_ = sink
}

// leadingDigits is what digits8 must return for buf, computed digit by
// digit: the number of leading decimal digits and their value.
func leadingDigits(buf [8]byte) (int, uint64) {
	k, v := 0, uint64(0)
	for k < 8 && buf[k] >= '0' && buf[k] <= '9' {
		v = v*10 + uint64(buf[k]-'0')
		k++
	}
	return k, v
}

func TestDigits8(t *testing.T) {
	tests := []string{"", "0", "7", "12", "1234567", "12345678", "99999999", "00000001",
		"123 4567", "1234567x", "1:345678", "9/", "\xff\xfa12345", "12\xfa\xff3456", "12345\xfe78"}
	for _, in := range tests {
		var buf [8]byte
		copy(buf[:], in)
		for j := len(in); j < 8; j++ {
			buf[j] = ' '
		}
		k, v := digits8(binary.LittleEndian.Uint64(buf[:]))
		wantK, wantV := leadingDigits(buf)
		if k != wantK || v != wantV {
			t.Errorf("digits8(%q) = %d, %d, want %d, %d", buf, k, v, wantK, wantV)
		}
	}
	// Random words over the digits and their neighbours.
	alphabet := []byte("0123456789/: \x00\x29\x3a\xf9\xfa\xff")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var buf [8]byte
		for j := range buf {
			if rng.IntN(4) > 0 {
				buf[j] = '0' + byte(rng.IntN(10))
			} else {
				buf[j] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		k, v := digits8(binary.LittleEndian.Uint64(buf[:]))
		wantK, wantV := leadingDigits(buf)
		if k != wantK || v != wantV {
			t.Fatalf("digits8(%q) = %d, %d, want %d, %d", buf, k, v, wantK, wantV)
		}
	}
}

func FuzzDigits8(f *testing.F) {
	f.Add(uint64(0x3837363534333231))
	f.Fuzz(func(t *testing.T, v uint64) {
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], v)
		k, got := digits8(v)
		wantK, want := leadingDigits(buf)
		if k != wantK || got != want {
			t.Fatalf("digits8(%q) = %d, %d, want %d, %d", buf, k, got, wantK, want)
		}
	})
}

// TestLastPid checks the pid scan's shortcut: the pid of the last field of
// lines that begin with a digit, and no answer (ok false) where fast and
// slow must decide.
func TestLastPid(t *testing.T) {
	p := newParser(time.Microsecond, 0)
	tests := []struct {
		line string
		pid  int32
		ok   bool
	}{
		{"0 1 0", 0, true},
		{"123 45 6", 6, true},
		{"123\t45\t6", 6, true},
		{"123  45  1048575", 1048575, true},
		{"1.5 2 3", 3, true},
		{"1 2 007", 7, true},
		{"1 2 1048576", 0, false},  // above the largest pid
		{"1 2 10000000", 0, false}, // 8 digits
		{"1 2 3 ", 0, false},       // slow trims: left to it
		{"1 2 3\r", 0, false},
		{"1 2\v3", 0, false},
		{"  1 2 3", 0, false}, // leading blanks: left to slow
		{"# 1 2 3", 0, false}, // a comment is skipped, never counted
		{"1 2 x3", 0, false},
		{"12345", 0, false}, // one field of digits
		{"1 23", 0, false},  // too short for a record
		{"", 0, false},
	}
	for _, tc := range tests {
		pid, ok := p.lastPid([]byte(tc.line))
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("lastPid(%q) = %d %v, want %d %v", tc.line, pid, ok, tc.pid, tc.ok)
		}
	}
}
