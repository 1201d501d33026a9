package mpi

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/trace"
)

// cacheDir holds the shim built for this test binary.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parscope-mpi-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mpiImpl is an MPI implementation the tests run on: its compiler wrapper
// and launcher, and the Debian packages that provide them.
type mpiImpl struct {
	Impl
	devPkg, runPkg, run string
}

var (
	mpichImpl = mpiImpl{Impl: Impl{Name: "mpich", MPICC: "mpicc.mpich"},
		devPkg: "libmpich-dev", runPkg: "mpich", run: "mpirun.mpich"}
	openMPIImpl = mpiImpl{Impl: Impl{Name: "openmpi", MPICC: "mpicc.openmpi"},
		devPkg: "libopenmpi-dev", runPkg: "openmpi-bin", run: "mpirun.openmpi"}
	impls = []mpiImpl{mpichImpl, openMPIImpl}
)

// shim is one implementation's shim, built once per test binary.
type shim struct {
	once sync.Once
	lib  string
	err  error
}

var shims = map[string]*shim{mpichImpl.Name: {}, openMPIImpl.Name: {}}

// setup returns impl's compiler wrapper and launcher, and the shim built
// with the former (once per test binary).
func setup(t testing.TB, impl mpiImpl) (cc, run, lib string) {
	t.Helper()
	cc = needtool.Path(t, impl.devPkg, impl.MPICC)
	run = needtool.Path(t, impl.runPkg, impl.run)
	s := shims[impl.Name]
	s.once.Do(func() { s.lib, s.err = Build(context.Background(), BuildOptions{MPICC: cc, CacheDir: cacheDir}) })
	if s.err != nil {
		t.Fatal(s.err)
	}
	return cc, run, s.lib
}

// compile builds an MPI program with debug information.
func compile(t testing.TB, cc, src string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	out, err := exec.Command(cc, "-O1", "-g", "-Wno-stringop-overflow", "-I", "include", "-o", exe, src, "-lm").CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, src, err, out)
	}
	return exe
}

// runMPI runs exe on np ranks of impl under the shim and returns the rank
// files' directory, the launcher's output and its error.
func runMPI(t testing.TB, impl mpiImpl, run, lib string, np int, buffer int64, exe string, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := LaunchArgs(append([]string{run, "-np", fmt.Sprint(np), exe}, args...), impl.Impl, buffer)
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = LaunchEnv(os.Environ(), impl.Impl, lib, dir, buffer)
	out, err := c.CombinedOutput()
	return dir, string(out), err
}

// record runs src's program on np ranks of impl and merges its rank
// files into memory.
func record(t testing.TB, impl mpiImpl, np int, src string, opts Options, args ...string) (*trace.Memory, *Report) {
	t.Helper()
	cc, run, lib := setup(t, impl)
	exe := compile(t, cc, src)
	dir, out, err := runMPI(t, impl, run, lib, np, 0, exe, args...)
	if err != nil {
		t.Fatalf("%s on %d ranks: %v\n%s", src, np, err, out)
	}
	files, err := RankFiles(dir)
	if err != nil || len(files) != np {
		t.Fatalf("%d rank files (%v), want %d\n%s", len(files), err, np, out)
	}
	var m trace.Memory
	rep, err := Merge(context.Background(), files, &m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &m, rep
}

func analyze(t testing.TB, m *trace.Memory, opts comm.Options) *comm.Result {
	t.Helper()
	res, err := comm.Analyze(context.Background(), m.Header(), m.Reader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func node(t testing.TB, res *comm.Result, name string) *comm.Node {
	t.Helper()
	ids := res.Find(name)
	if len(ids) != 1 {
		t.Fatalf("structure %q: %d nodes", name, len(ids))
	}
	return &res.Nodes[ids[0]]
}

// edge is one expected contribution to a matrix.
type edge struct {
	src, dst     int
	bytes, count int64
}

func matrixOf(n int, edges []edge) *comm.Matrix {
	m := comm.NewMatrix(n)
	for _, e := range edges {
		m.Bytes[e.src*n+e.dst] += e.bytes
		m.Count[e.src*n+e.dst] += e.count
	}
	return m
}

func sameMatrix(t *testing.T, what string, got, want *comm.Matrix) {
	t.Helper()
	if got.N != want.N || !slices.Equal(got.Bytes, want.Bytes) || !slices.Equal(got.Count, want.Count) {
		t.Errorf("%s:\nbytes %v\nwant  %v\ncount %v\nwant  %v", what, got.Bytes, want.Bytes, got.Count, want.Count)
	}
}

// sourceLines returns the 1-based lines of src containing s.
func sourceLines(t *testing.T, src, s string) []int {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), s) {
			out = append(out, n)
		}
	}
	return out
}

// TestKnownMatrices runs testdata/known.c on 4 ranks of MPICH and of Open
// MPI: every message it sends is listed below, and the merged trace's
// matrices through analysis/comm must be exactly these.
func TestKnownMatrices(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.Name, func(t *testing.T) { testKnownMatrices(t, impl) })
	}
}

func testKnownMatrices(t *testing.T, impl mpiImpl) {
	m, rep := record(t, impl, 4, "testdata/known.c", Options{})
	if rep.Sends != 17 || rep.Recvs != 17 || rep.Matched != 17 || rep.UnmatchedSends != 0 || rep.UnmatchedRecvs != 0 ||
		rep.Collectives != 12 || rep.Communicators != 3 || rep.OutsideComm != 0 || rep.Uncompleted != 0 || rep.UnknownRequest != 0 {
		t.Errorf("report %+v", rep)
	}
	// Rank 2's three ring receives and its Irecv, and rank 3's Irecv,
	// were posted with MPI_ANY_SOURCE; every one is resolved.
	if rep.AnySource != 5 || rep.AnySourceResolved != 5 {
		t.Errorf("MPI_ANY_SOURCE: %d posted, %d resolved; want 5, 5", rep.AnySource, rep.AnySourceResolved)
	}
	for _, r := range m.Records {
		if r.Kind == trace.KindRecv && (r.Peer == trace.NoPeer || r.Flags&trace.FlagAnySource != 0 || r.End == 0 || r.Tag < 0) {
			t.Errorf("receive %v: unresolved or uncompleted", r)
		}
	}
	library := map[string]string{"mpich": "MPICH", "openmpi": "Open MPI"}[impl.Name]
	if !strings.Contains(rep.MPI, library) || len(rep.Files) != 4 || !rep.Files[3].Complete || rep.CallSites {
		t.Errorf("mpi %q, files %+v, call sites %v", rep.MPI, rep.Files, rep.CallSites)
	}
	ring := []edge{{0, 1, 300, 3}, {1, 2, 600, 3}, {2, 3, 900, 3}, {3, 0, 1200, 3}}
	nb := []edge{{0, 2, 64, 1}, {0, 3, 16, 1}, {1, 3, 32, 1}, {1, 3, 48, 1}, {3, 1, 48, 1}}
	coll := []edge{
		{1, 0, 80, 1}, {1, 2, 80, 1}, {1, 3, 80, 1}, // Bcast from 1, linear
		{2, 0, 16, 1}, {0, 2, 16, 1}, {3, 1, 16, 1}, {1, 3, 16, 1}, // Allreduce in {0,2} and {1,3}
		{1, 0, 0, 1}, {2, 0, 0, 1}, {3, 0, 0, 1}, {0, 1, 0, 1}, {0, 2, 0, 1}, {0, 3, 0, 1}, // Barrier
	}
	res := analyze(t, m, comm.Options{Selection: comm.Selection{Decompose: trace.Linear}})
	sameMatrix(t, "whole program", node(t, res, comm.RootName).AggregateMatrix(), matrixOf(4, slices.Concat(ring, nb, coll)))
	sameMatrix(t, "loop ring", node(t, res, "loop ring").OwnMatrix(), matrixOf(4, ring))
	sameMatrix(t, "phase nb", node(t, res, "phase nb").OwnMatrix(), matrixOf(4, nb))
	sameMatrix(t, "phase coll", node(t, res, "phase coll").OwnMatrix(), matrixOf(4, coll))
	if k := node(t, res, "loop ring"); k.Kind != "loop" || k.Entries != 4 {
		t.Errorf("loop ring: kind %s, %d entries", k.Kind, k.Entries)
	}
	if p := res.Problems; p.UnmatchedSends != 0 || p.UnmatchedRecvs != 0 || p.OutsideComm != 0 || p.UnbalancedExits != 0 || p.Unclosed != 0 {
		t.Errorf("problems %+v", p)
	}

	// The same run with call sites: every MPI call is a region labelled
	// with its source line, resolved from known's DWARF.
	var labels []string
	m2, rep2 := record(t, impl, 4, "testdata/known.c", Options{CallSites: CallSitesOn})
	if !rep2.CallSites || rep2.UnresolvedSites != 0 {
		t.Errorf("call sites %v, %d unresolved", rep2.CallSites, rep2.UnresolvedSites)
	}
	for _, r := range m2.Header().Regions {
		if r.Kind == trace.RegionCall {
			labels = append(labels, r.Label)
		}
	}
	for _, c := range []struct{ fn, text string }{
		{"MPI_Send", "MPI_Send(buf, 100"}, {"MPI_Recv", "MPI_Recv(rbuf"}, {"MPI_Isend", "MPI_Isend("},
		{"MPI_Waitall", "MPI_Waitall("}, {"MPI_Bcast", "MPI_Bcast("}, {"MPI_Allreduce", "MPI_Allreduce("},
		{"MPI_Sendrecv", "MPI_Sendrecv("}, {"MPI_Barrier", "MPI_Barrier("},
	} {
		lines := sourceLines(t, "testdata/known.c", c.text)
		if len(lines) == 0 {
			t.Fatalf("no %q in known.c", c.text)
		}
		for _, l := range lines {
			want := fmt.Sprintf("%s main known.c:%d", c.fn, l)
			if !slices.Contains(labels, want) {
				t.Errorf("no call-site region %q in %q", want, labels)
			}
		}
	}
	res2 := analyze(t, m2, comm.Options{Selection: comm.Selection{Decompose: trace.Linear}})
	sameMatrix(t, "whole program with call sites", node(t, res2, comm.RootName).AggregateMatrix(), matrixOf(4, slices.Concat(ring, nb, coll)))
	sameMatrix(t, "loop ring with call sites", node(t, res2, "loop ring").AggregateMatrix(), matrixOf(4, ring))
}

// TestKilledRank: rank 3 of die.c SIGKILLs itself after 20 sends; the
// launcher then kills the others. Every file still merges, rank 3's is
// reported partial, and the sends it flushed before dying are there; on
// MPICH and on Open MPI.
func TestKilledRank(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.Name, func(t *testing.T) { testKilledRank(t, impl) })
	}
}

func testKilledRank(t *testing.T, impl mpiImpl) {
	cc, run, lib := setup(t, impl)
	exe := compile(t, cc, "testdata/die.c")
	dir, out, err := runMPI(t, impl, run, lib, 4, 256, exe)
	if err == nil {
		t.Fatalf("die ran to completion:\n%s", out)
	}
	files, err := RankFiles(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("rank files %v (%v)", files, err)
	}
	var m trace.Memory
	rep, err := Merge(context.Background(), files, &m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var f3 *FileReport
	for i := range rep.Files {
		if rep.Files[i].Rank == 3 {
			f3 = &rep.Files[i]
		}
		if rep.Files[i].Complete {
			t.Errorf("rank %d's file is complete, but no rank finalized", rep.Files[i].Rank)
		}
	}
	if f3 == nil {
		t.Fatalf("no file of rank 3: %+v", rep.Files)
	}
	var sends3 int
	for _, r := range m.Records {
		if r.Kind == trace.KindSend && r.Proc == 3 {
			if r.Peer != 0 || r.Value != 8 || r.Tag != 1 {
				t.Errorf("rank 3 send %v", r)
			}
			sends3++
		}
	}
	// A 256-byte buffer holds three 68-byte events: at most the last
	// three sends and the kill are lost.
	if sends3 < 17 || sends3 > 20 {
		t.Errorf("rank 3: %d of its 20 sends kept, want 17..20", sends3)
	}
	if m.Header().Repairs[RepairPartialFile] != int64(len(rep.Files)) {
		t.Errorf("repairs %v", m.Header().Repairs)
	}
	res := analyze(t, &m, comm.Options{})
	if b, c := node(t, res, comm.RootName).AggregateMatrix().At(3, 0); c != int64(sends3) || b != 8*int64(sends3) {
		t.Errorf("matrix 3->0: %d bytes in %d messages, want %d messages", b, c, sends3)
	}
}
