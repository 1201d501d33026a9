package format

// digitPairs holds "00" to "99", for formatting two digits at a time.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does, two
// digits at a time; exporters use it for the numbers that fill most fields.
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		return AppendUint(append(b, '-'), -uint64(v)) // right for math.MinInt64 too
	}
	return AppendUint(b, uint64(v))
}

// AppendUint appends u in decimal, as strconv.AppendUint(b, u, 10) does.
func AppendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	var a [20]byte
	i := len(a)
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		a[i], a[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		a[i], a[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		a[i] = byte('0' + u)
	}
	return append(b, a[i:]...)
}
