//go:build !amd64

package instrument

const haveRDTSC = false

// rdtsc is never called where haveRDTSC is false.
func rdtsc() int64 { return nanotime() }
