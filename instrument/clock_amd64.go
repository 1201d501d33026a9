package instrument

const haveRDTSC = true

// rdtsc reads the CPU's time-stamp counter (clock_amd64.s).
func rdtsc() int64
