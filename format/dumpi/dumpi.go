// Package dumpi imports SST DUMPI binary MPI traces: a .meta file naming
// the ranks (numprocs, fileprefix) and one .bin file per rank, decoded in
// pure Go (the layout is described in decode.go).
//
// Each rank becomes a process of run 0. Every MPI call becomes a region
// (the region id is DUMPI's function label, its label the MPI name) from
// the call's wall-clock enter time to its exit time. Point-to-point calls
// also become messages: Send/Bsend/Ssend/Rsend and Recv last from enter to
// exit; Isend/Ibsend/Issend/Irsend/Irecv are posted at the call's enter and
// complete at the exit of the Wait/Test call that completes their request
// (Seq holds the request). Sizes are count × the datatype size from the
// file's own size table. A receive from MPI_ANY_SOURCE takes its source
// (and an MPI_ANY_TAG receive its tag) from the completing status only when
// that status names a valid rank; statuses are not trusted otherwise.
// Wait, Test, Waitany/Testany, Waitall/Testall and Waitsome/Testsome
// complete requests. Collectives (Barrier, Bcast, Gather(v), Scatter(v),
// Allgather(v), Alltoall(v), Reduce, Allreduce, Reduce_scatter, Scan,
// Exscan) become trace.Coll records. Times are ns since the .meta's start time.
//
// Every call SST DUMPI defines is decoded: the argument readers are
// generated (go generate) from calls.txt, one table of the record layout
// taken from sst-dumpi's own readers, for every file version from 0.x
// (with the layouts that changed at 0.5, 0.6.2, 0.6.3, 0.6.8 and 0.6.9) up
// to 13.0, the layout being unchanged since 1.0. Communicators built from
// groups (Comm_group, Group_incl/excl/range/union/intersection/difference,
// Comm_create, Comm_dup) get their members; MPI_COMM_SELF is each rank
// alone; communicators whose members one rank's file cannot tell
// (Comm_split, topologies, intercommunicators) are declared with no
// members, named as unknown and counted in the metadata
// (dumpi.comms-unknown-members). A label no DUMPI writer produces stops
// the import with the file, the byte offset and the label, since records
// carry no length.
package dumpi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Name is the format's name as given to --format.
const Name = "dumpi"

// RepairUnwaitedRequest counts non-blocking messages whose request no
// Wait or Test completed; their End is 0 (unknown).
const RepairUnwaitedRequest = "dumpi-unwaited-request"

// DUMPI's communicator ids for MPI_COMM_WORLD and its special ranks.
const (
	commWorld = 2
	anySource = -1
	anyTag    = -1
)

//go:generate go run ./internal/gencalls

func init() { format.Register(Importer{}) }

// Importer imports DUMPI traces; it is registered under Name.
type Importer struct{}

// Name returns "dumpi".
func (Importer) Name() string { return Name }

// Describe is a one-line description for help texts.
func (Importer) Describe() string { return "SST DUMPI binary MPI traces: .meta plus one .bin per rank" }

// Detect recognises a .meta file with numprocs and fileprefix, or a .bin
// file starting with DUMPI's magic.
func (Importer) Detect(name string, head []byte) bool {
	if len(head) >= 8 && string(head[:8]) == "\xff\xaa\xdd\x44DUMPI" {
		return true
	}
	s := string(head)
	return strings.Contains(s, "numprocs=") && strings.Contains(s, "fileprefix=")
}

// meta is the content of a .meta file.
type meta struct {
	kv    map[string]string
	procs int
	bins  []string
}

func readMeta(path string) (*meta, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, &format.Error{File: path, Offset: -1, Msg: "cannot open", Err: err}
	}
	defer f.Close()
	m := &meta{kv: map[string]string{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, format.LineError(path, n, "expected key=value, got %q", format.Excerpt([]byte(line)))
		}
		m.kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, &format.Error{File: path, Offset: -1, Msg: "read error", Err: err}
	}
	np, err := strconv.Atoi(m.kv["numprocs"])
	if err != nil || np <= 0 || np > 1<<20 {
		return nil, format.LineError(path, 0, "expected numprocs=N (1..%d), got %q", 1<<20, format.Excerpt([]byte(m.kv["numprocs"])))
	}
	prefix := m.kv["fileprefix"]
	if prefix == "" {
		return nil, format.LineError(path, 0, "expected fileprefix=NAME")
	}
	m.procs = np
	for r := 0; r < np; r++ {
		m.bins = append(m.bins, filepath.Join(filepath.Dir(path), fmt.Sprintf("%s-%04d.bin", filepath.Base(prefix), r)))
	}
	return m, nil
}

// Import reads the .meta file given as the one input and the .bin file of
// every rank next to it.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) != 1 || !strings.HasSuffix(inputs[0], ".meta") {
		return errors.New("dumpi: give the trace's .meta file as the one input")
	}
	m, err := readMeta(inputs[0])
	if err != nil {
		return err
	}
	h := w.Header()
	h.Meta.Source = Name
	h.Meta.ClockResolution = 1
	h.Meta.Inputs = append(h.Meta.Inputs, inputs[0])
	h.Meta.Host = m.kv["hostname"]
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	for _, k := range []string{"username", "startime", "version", "subversion", "subsubversion"} {
		if v, ok := m.kv[k]; ok {
			h.Meta.Extra["dumpi."+k] = v
		}
	}
	origin, _ := strconv.ParseInt(m.kv["startime"], 10, 64)
	h.EnsureRun(0, int32(m.procs))
	h.Runs[0].Name = m.kv["fileprefix"]
	cs := newCommSet(int32(m.procs))
	seen := map[int]bool{}
	for r, bin := range m.bins {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := regular.ReadFile(bin)
		if err != nil {
			return &format.Error{File: bin, Offset: -1, Msg: "cannot read the rank's trace", Err: err}
		}
		recs, err := decodeRank(b, int32(r), int32(m.procs), origin, h, cs, seen)
		if err != nil {
			var oe *offsetErr
			if errors.As(err, &oe) {
				return format.OffsetError(bin, oe.off, "%s", oe.msg)
			}
			return &format.Error{File: bin, Offset: -1, Msg: "decode", Err: err}
		}
		for _, rec := range recs {
			if err := w.Add(rec); err != nil {
				return &format.Error{File: bin, Offset: -1, Msg: "add record", Err: err}
			}
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: int32(r), Name: fmt.Sprintf("rank %d", r),
			Extra: map[string]string{"file": bin}})
	}
	for _, l := range slices.Sorted(maps.Keys(seen)) {
		h.Regions = append(h.Regions, trace.RegionDef{ID: int32(l), Kind: trace.RegionFunction, Label: functionNames[l], Parent: -1})
	}
	h.Comms = append(h.Comms, cs.sorted()...)
	if cs.unknown > 0 {
		h.Meta.Extra["dumpi.comms-unknown-members"] = strconv.Itoa(cs.unknown)
	}
	return nil
}
