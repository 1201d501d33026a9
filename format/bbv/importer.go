package bbv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

func init() { format.Register(Importer{}) }

// Importer imports basic block vector files into the trace model. It is
// registered with the format package under the name "bbv".
//
// Each input file is one process of run 0, and each T line one interval:
// entry i of interval n becomes trace.BBV(0, proc, n, 0, block, count),
// with n the 0-based index of the T line, block the 1-based id from the
// file and count an integer (a fractional count is an error). Intervals
// have no timestamps, so T is 0.
//
// Process ids are dense, 0..P-1:
//   - With one input, the process is Params["proc"] (default 0).
//   - With several inputs, each file name's last run of decimal digits is
//     its key (valgrind's "bb.out.1234" gives 1234, "bb.rank3.gz" gives 3).
//     When every name has a key and no two keys are equal, processes are
//     numbered in ascending key order, so rank files map to their ranks
//     and pid files to start order whatever order the shell listed them
//     in. Otherwise processes are numbered in input order.
//
// Header.Procs records each process's file name and key. Params read:
//
//	proc=N         process id of a single input (default 0)
//	pc=FILE        exp-bbv --pc-out-file ("F:<id>:<hex addr>:<function>"):
//	               names the blocks in Header.States (Name is the function,
//	               or the address when it has none; Description the address)
//	quirks=simpoint  parse as SimPoint 3.2 does (see ParseOptions)
//	maxdim=N       largest block id accepted (default DefaultMaxDim)
type Importer struct{}

// Name returns "bbv".
func (Importer) Name() string { return "bbv" }

// Describe returns a one-line description of the format.
func (Importer) Describe() string {
	return "basic block vectors (valgrind exp-bbv, SimPoint .bb), one file per process"
}

// Detect reports whether the first line that is neither blank nor a '#'
// comment starts with "T:".
func (Importer) Detect(name string, head []byte) bool {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		return bytes.HasPrefix(line, []byte("T:"))
	}
	return false
}

// maxExactCount is the largest count a float64 holds exactly.
const maxExactCount = 1 << 53

// Import reads the inputs and writes their BBV records to w.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) == 0 {
		return errors.New("bbv: no input files")
	}
	popts := ParseOptions{}
	switch q := opts.Params["quirks"]; q {
	case "", "none":
	case "simpoint":
		popts.SimPointQuirks = true
	default:
		return fmt.Errorf("bbv: quirks=%q: want \"simpoint\" or \"none\"", q)
	}
	if s, ok := opts.Params["maxdim"]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 1 {
			return fmt.Errorf("bbv: maxdim=%q: want an integer between 1 and %d", s, math.MaxInt32)
		}
		popts.MaxDim = int32(n)
	}
	procs, keys, err := AssignProcs(inputs, opts.Params["proc"])
	if err != nil {
		return fmt.Errorf("bbv: %w", err)
	}

	h := w.Header()
	h.Meta.Source = "bbv"
	h.Meta.Inputs = append(h.Meta.Inputs, inputs...)
	nprocs := int32(0)
	for _, p := range procs {
		nprocs = max(nprocs, p+1)
	}
	h.EnsureRun(0, nprocs)

	for i, in := range inputs {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, dim, err := importFile(ctx, in, popts, procs[i], w)
		if err != nil {
			return err
		}
		extra := map[string]string{
			"file":      in,
			"intervals": strconv.Itoa(n),
			"dim":       strconv.Itoa(int(dim)),
		}
		if keys[i] >= 0 {
			extra["key"] = strconv.FormatInt(keys[i], 10)
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: procs[i], Name: filepath.Base(in), Extra: extra})
	}
	if pc := opts.Params["pc"]; pc != "" {
		states, err := ReadPCFile(pc)
		if err != nil {
			return err
		}
		h.States = append(h.States, states...)
	}
	return nil
}

// importFile streams one file's vectors into w as records of process proc.
func importFile(ctx context.Context, path string, popts ParseOptions, proc int32, w trace.Writer) (int, int32, error) {
	f, err := regular.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("bbv: %w", err)
	}
	defer f.Close()
	p, err := newParser(path, f, popts)
	if err != nil {
		return 0, 0, err
	}
	n := 0
	for ; ; n++ {
		v, line, err := p.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
		}
		if n == math.MaxInt32 {
			return 0, 0, format.LineError(path, line, "more than %d intervals", math.MaxInt32)
		}
		for j, b := range v.Blocks {
			c := v.Counts[j]
			switch {
			case c < 0:
				return 0, 0, format.LineError(path, line, "block %d has negative count %g", b, c)
			case c != math.Trunc(c):
				return 0, 0, format.LineError(path, line, "block %d has count %g, which is not an integer (expected an instruction count)", b, c)
			case c > maxExactCount:
				return 0, 0, format.LineError(path, line, "block %d has count %g, larger than 2^53", b, c)
			}
			if err := w.Add(trace.BBV(0, proc, int32(n), 0, b, int64(c))); err != nil {
				return 0, 0, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
	}
	if n == 0 {
		// An empty file, or one of only other text, is not a BBV file:
		// importing it would give a trace of nothing.
		what := "the file is empty"
		if lines := p.lr.Line(); lines > 0 {
			what = fmt.Sprintf("none of its %d line(s) is one", lines)
		}
		return 0, 0, &format.Error{File: path, Offset: -1,
			Msg: fmt.Sprintf(`no basic block vectors: %s (expected lines "T:block:count :block:count ..." as valgrind exp-bbv writes)`, what)}
	}
	return n, p.dim, nil
}

// AssignProcs returns the process id of each input file under the rule
// documented on Importer, and each file's numeric key (-1 when its name
// has none). proc is Params["proc"], which applies to a single input.
func AssignProcs(inputs []string, proc string) (procs []int32, keys []int64, err error) {
	keys = make([]int64, len(inputs))
	for i, in := range inputs {
		keys[i] = NameKey(in)
	}
	procs = make([]int32, len(inputs))
	if proc != "" {
		if len(inputs) != 1 {
			return nil, nil, fmt.Errorf("proc=%s applies to a single input, but %d were given", proc, len(inputs))
		}
		n, err := strconv.ParseInt(proc, 10, 32)
		if err != nil || n < 0 {
			return nil, nil, fmt.Errorf("proc=%q: want a non-negative integer", proc)
		}
		procs[0] = int32(n)
		return procs, keys, nil
	}
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	byKey := len(inputs) > 1
	seen := map[int64]bool{}
	for _, k := range keys {
		if k < 0 || seen[k] {
			byKey = false
			break
		}
		seen[k] = true
	}
	if byKey {
		slices.SortStableFunc(order, func(a, b int) int { return cmpInt64(keys[a], keys[b]) })
	}
	for p, i := range order {
		procs[i] = int32(p)
	}
	return procs, keys, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NameKey returns the value of the last run of decimal digits in the base
// name of path ("bb.out.1234" → 1234, "bb.rank3.gz" → 3), or -1 when it has
// none or the number does not fit in 63 bits.
func NameKey(path string) int64 {
	base := filepath.Base(path)
	end := -1
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] >= '0' && base[i] <= '9' {
			end = i + 1
			break
		}
	}
	if end < 0 {
		return -1
	}
	start := end - 1
	for start > 0 && base[start-1] >= '0' && base[start-1] <= '9' {
		start--
	}
	n, err := strconv.ParseInt(base[start:end], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// ReadPCFile reads an exp-bbv --pc-out-file: lines "F:<block id>:<hex
// address>:<function>" (the function may be empty and may itself contain
// ':'). It returns one state definition per block, with Name the function
// (or the address when there is none) and Description the address as
// "0x<hex>". Blank and '#' lines are skipped; anything else is an error.
func ReadPCFile(path string) ([]trace.StateDef, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		return nil, fmt.Errorf("bbv: pc file: %w", err)
	}
	defer lr.Close()
	var states []trace.StateDef
	seen := map[int32]int{}
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		parts := bytes.SplitN(line, []byte(":"), 4)
		if len(parts) != 4 || string(parts[0]) != "F" {
			return nil, lr.Errorf("expected \"F:<block id>:<hex address>:<function>\", found %s", describe(line, 0))
		}
		id, err := strconv.ParseInt(string(parts[1]), 10, 32)
		if err != nil || id < 1 {
			return nil, lr.Errorf("bad block id %q (expected a positive decimal integer)", format.Excerpt(parts[1]))
		}
		addr, err := strconv.ParseUint(string(parts[2]), 16, 64)
		if err != nil {
			return nil, lr.Errorf("bad address %q of block %d (expected hexadecimal digits)", format.Excerpt(parts[2]), id)
		}
		if prev, dup := seen[int32(id)]; dup {
			return nil, lr.Errorf("block %d is already defined on line %d", id, prev)
		}
		seen[int32(id)] = lr.Line()
		desc := "0x" + strconv.FormatUint(addr, 16)
		name := string(bytes.TrimSpace(parts[3]))
		if name == "" {
			name = desc
		}
		states = append(states, trace.StateDef{ID: int32(id), Name: name, Description: desc})
	}
	return states, nil
}
