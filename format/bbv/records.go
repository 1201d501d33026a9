package bbv

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parscope/parscope/trace"
)

// Stream is the basic block vectors of one process of a trace, as the
// in-memory File the parser builds from a .bb file.
type Stream struct {
	Run, Proc int32
	// File holds the process's intervals in interval order. Its Lines are
	// nil (records have no lines); its Name is "<name> run R proc P".
	File *File
}

// FromRecords collects trace.KindBBV records into one File per process, in
// the order the records come (a .pst store's BBV reader gives (run,
// process, interval) order). Each record is one entry of interval Seq:
// block ID with count Value; entries keep their record order, which is
// the file order of an imported .bb file, so an imported file comes back
// with exactly the vectors ReadFile returns.
//
// Records of other kinds are skipped. It is an error (naming the process
// and interval) when a process's intervals go backwards or skip a number
// (an interval with no entries cannot be normalised), when a block id is
// below 1 or above maxDim (0 means DefaultMaxDim), when a count is
// negative, or when a block appears twice in one interval. name is used
// in File names and errors.
func FromRecords(ctx context.Context, name string, r trace.Reader, maxDim int32) ([]Stream, error) {
	if maxDim <= 0 {
		maxDim = DefaultMaxDim
	}
	var out []Stream
	var cur *Stream
	interval := int32(-1)
	// seen[id] == stamp marks ids already in the current interval.
	seen := map[int32]int32{}
	buf := make([]trace.Record, 4096)
	batches := 0
	for {
		n, err := r.Read(buf)
		for _, rec := range buf[:n] {
			if rec.Kind != trace.KindBBV {
				continue
			}
			if cur == nil || rec.Run != cur.Run || rec.Proc != cur.Proc {
				for _, s := range out {
					if s.Run == rec.Run && s.Proc == rec.Proc {
						return nil, fmt.Errorf("bbv: %s: the records of run %d process %d are not contiguous (expected (run, process, interval) order)", name, rec.Run, rec.Proc)
					}
				}
				out = append(out, Stream{Run: rec.Run, Proc: rec.Proc,
					File: &File{Name: fmt.Sprintf("%s run %d proc %d", name, rec.Run, rec.Proc)}})
				cur = &out[len(out)-1]
				interval = -1
			}
			f := cur.File
			where := func() string {
				return fmt.Sprintf("bbv: %s: run %d process %d interval %d", name, rec.Run, rec.Proc, rec.Seq)
			}
			switch {
			case rec.Seq == interval:
			case rec.Seq == interval+1:
				interval = rec.Seq
				f.Vectors = append(f.Vectors, Vector{})
				clear(seen)
			case rec.Seq < interval:
				return nil, fmt.Errorf("%s: comes after interval %d (expected intervals in order)", where(), interval)
			default:
				return nil, fmt.Errorf("%s: intervals %d to %d have no entries (expected consecutive intervals from 0)", where(), interval+1, rec.Seq-1)
			}
			if rec.ID < 1 || rec.ID > maxDim {
				return nil, fmt.Errorf("%s: block id %d outside 1..%d", where(), rec.ID, maxDim)
			}
			if rec.Value < 0 {
				return nil, fmt.Errorf("%s: block %d has negative count %d", where(), rec.ID, rec.Value)
			}
			if _, dup := seen[rec.ID]; dup {
				return nil, fmt.Errorf("%s: block %d appears twice", where(), rec.ID)
			}
			seen[rec.ID] = rec.Seq
			v := &f.Vectors[len(f.Vectors)-1]
			v.Blocks = append(v.Blocks, rec.ID)
			v.Counts = append(v.Counts, float64(rec.Value))
			f.Dim = max(f.Dim, rec.ID)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bbv: %s: %w", name, err)
		}
		if batches++; batches%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
