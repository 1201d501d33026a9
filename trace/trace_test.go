package trace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestDecompose(t *testing.T) {
	members := []int32{10, 11, 12, 13, 14}
	pairs := func(ms []Message) string {
		var s []string
		for _, m := range ms {
			s = append(s, fmt.Sprintf("%d>%d:%d", m.Src, m.Dst, m.Bytes))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		op   CollectiveOp
		alg  Decomposition
		root int
		want string
	}{
		{OpBcast, Linear, 2, "12>10:8 12>11:8 12>13:8 12>14:8"},
		{OpReduce, Linear, 0, "11>10:8 12>10:8 13>10:8 14>10:8"},
		// Binomial broadcast over 5 from root 0: 0>1, 0>2 1>3, 0>4.
		{OpBcast, BinomialTree, 0, "10>11:8 10>12:8 11>13:8 10>14:8"},
		// Rooted at 3: relative ranks shift.
		{OpBcast, BinomialTree, 3, "13>14:8 13>10:8 14>11:8 13>12:8"},
		{OpReduce, BinomialTree, 0, "11>10:8 12>10:8 13>11:8 14>10:8"},
		{OpBcast, Ring, 1, "11>12:8 12>13:8 13>14:8 14>10:8"},
		{OpScan, Linear, 0, "10>11:8 11>12:8 12>13:8 13>14:8"},
	} {
		ms, err := Decompose(tc.op, tc.alg, 0, members, tc.root, 8, 0, 100, 200)
		if err != nil {
			t.Fatal(err)
		}
		if got := pairs(ms); got != tc.want {
			t.Errorf("%s %s root %d:\n got %s\nwant %s", tc.op, tc.alg, tc.root, got, tc.want)
		}
	}
	// Message counts of the rootless operations.
	for _, tc := range []struct {
		op   CollectiveOp
		alg  Decomposition
		want int
	}{
		{OpAllreduce, Linear, 8}, {OpAlltoall, Linear, 20}, {OpAllgather, Ring, 20}, {OpBarrier, Linear, 8},
	} {
		ms, err := Decompose(tc.op, tc.alg, 0, members, 0, 4, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != tc.want {
			t.Errorf("%s %s: %d messages, want %d", tc.op, tc.alg, len(ms), tc.want)
		}
		if tc.op == OpBarrier && ms[0].Bytes != 0 {
			t.Errorf("barrier carries %d bytes", ms[0].Bytes)
		}
	}
	// Every member receives a broadcast exactly once, whatever the algorithm.
	for _, alg := range []Decomposition{Linear, BinomialTree, Ring} {
		for n := 1; n <= 17; n++ {
			ms := make([]int32, n)
			for i := range ms {
				ms[i] = int32(i)
			}
			for root := 0; root < n; root++ {
				out, err := Decompose(OpBcast, alg, 0, ms, root, 1, 0, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				got := map[int32]int{}
				for _, m := range out {
					got[m.Dst]++
				}
				for i := 0; i < n; i++ {
					want := 1
					if i == root {
						want = 0
					}
					if got[int32(i)] != want {
						t.Fatalf("%s n=%d root=%d: member %d receives %d times", alg, n, root, i, got[int32(i)])
					}
				}
			}
		}
	}
	if _, err := Decompose(OpBcast, Linear, 0, members, 7, 8, 0, 0, 0); err == nil {
		t.Error("root outside the communicator accepted")
	}
}

func TestParseCollectiveOp(t *testing.T) {
	for in, want := range map[string]CollectiveOp{
		"MPI_Allreduce": OpAllreduce, "mpi_allreduce_": OpAllreduce, "bcast": OpBcast,
		"MPI_Gatherv": OpGather, "MPI_Alltoallw": OpAlltoall, "MPI_Iallreduce": OpAllreduce,
		"PMPI_Barrier": OpBarrier, "MPI_Reduce_scatter": OpReduceScatter,
	} {
		got, ok := ParseCollectiveOp(in)
		if !ok || got != want {
			t.Errorf("ParseCollectiveOp(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := ParseCollectiveOp("MPI_Send"); ok {
		t.Error("MPI_Send parsed as a collective")
	}
}

func TestMatcher(t *testing.T) {
	recs := []Record{
		Send(0, 0, 10, 12, 1, 100, 7, 0),
		Send(0, 0, 11, 13, 1, 200, 7, 0), // same pair and tag: FIFO
		Recv(0, 1, 15, 20, 0, 100, 7, 0),
		Recv(0, 2, 16, 21, NoPeer, 50, 9, 0), // any-source, arrives before its send
		Send(0, 3, 17, 18, 2, 50, 9, 0),
		Recv(0, 1, 22, 25, 0, 200, 7, 0),
		Send(0, 0, 30, 31, 3, 1, 1, 0), // never received
	}
	var got []string
	m := Matcher{OnMatch: func(s, r *Record) { got = append(got, fmt.Sprintf("%d>%d %d/%d", s.Proc, r.Proc, s.Value, r.Value)) }}
	for i := range recs {
		m.Add(&recs[i])
	}
	want := []string{"0>1 100/100", "3>2 50/50", "0>1 200/200"}
	if !slices.Equal(got, want) {
		t.Fatalf("matches %v, want %v", got, want)
	}
	s, r := m.Unmatched()
	if len(s) != 1 || s[0].Peer != 3 || len(r) != 0 {
		t.Fatalf("unmatched sends %v recvs %v", s, r)
	}
}

func TestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var inputs []Reader
	var all []Record
	for p := int32(0); p < 9; p++ {
		var s []Record
		tm := int64(0)
		for i := 0; i < 500+int(p)*37; i++ {
			tm += int64(rng.IntN(3))
			s = append(s, State(int32(i/400), p, tm, int32(i)))
			if i%400 == 399 {
				tm = 0
			}
		}
		slices.SortStableFunc(s, Compare)
		all = append(all, s...)
		inputs = append(inputs, NewSliceReader(s))
	}
	slices.SortStableFunc(all, Compare)
	got, err := ReadAll(Merge(inputs...))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, all) {
		t.Fatal("merge order differs from a stable sort")
	}
	// An input error is passed on.
	bad := errors.New("broken input")
	_, err = ReadAll(Merge(NewSliceReader(all[:3]), errReader{bad}))
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the input's error", err)
	}
}

// TestMergeTiesAndRuns merges inputs whose records share processes and
// times, in long runs from one input and short ones, read through buffers
// of every small size: the merge must equal a stable sort of the inputs
// concatenated in order (equal keys in input order, then stream order).
func TestMergeTiesAndRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	var ins [][]Record
	var all []Record
	for in := 0; in < 5; in++ {
		var s []Record
		tm := int64(0)
		for i := 0; i < 2000; i++ {
			if rng.IntN(4) == 0 {
				tm += int64(rng.IntN(50)) // else a run of equal times
			}
			s = append(s, State(0, int32(rng.IntN(3)), tm, int32(in*10000+i)))
		}
		slices.SortStableFunc(s, Compare)
		ins = append(ins, s)
		all = append(all, s...)
	}
	slices.SortStableFunc(all, Compare)
	for size := 1; size <= 9; size++ {
		var inputs []Reader
		for _, s := range ins {
			inputs = append(inputs, NewSliceReader(s))
		}
		m := Merge(inputs...)
		var got []Record
		buf := make([]Record, size)
		for {
			n, err := m.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if !slices.Equal(got, all) {
			t.Fatalf("buffer of %d: merge differs from a stable sort (%d of %d records)", size, len(got), len(all))
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]Record) (int, error) { return 0, e.err }

func TestOrderCheck(t *testing.T) {
	var c OrderCheck
	ok := []Record{State(0, 0, 5, 1), State(0, 1, 3, 1), State(0, 0, 5, 2), State(1, 0, 0, 1), BBV(0, 0, 3, 0, 1, 2), BBV(0, 0, 1, 0, 1, 2)}
	for _, r := range ok {
		if err := c.Check(&r); err != nil {
			t.Fatalf("%v: %v", r, err)
		}
	}
	back := State(0, 0, 4, 1)
	if err := c.Check(&back); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("going back in time: %v", err)
	}
	neg := Send(0, 0, 9, 9, 1, -5, 0, 0)
	if err := c.Check(&neg); err == nil || !strings.Contains(err.Error(), "negative size") {
		t.Fatalf("negative size: %v", err)
	}
	np := State(0, -1, 9, 1)
	if err := c.Check(&np); err == nil {
		t.Fatal("negative process accepted")
	}
}

func TestHeaderValidate(t *testing.T) {
	h := Header{Runs: []RunInfo{{ID: 0, Procs: 2}}, Regions: []RegionDef{{ID: 1, Parent: -1}, {ID: 2, Parent: 1}}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	h.Regions = append(h.Regions, RegionDef{ID: 3, Parent: 9})
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "parent 9") {
		t.Fatalf("dangling parent: %v", err)
	}
	h.Regions = h.Regions[:2]
	h.States = []StateDef{{ID: 4}, {ID: 4}}
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "state id 4 defined twice") {
		t.Fatalf("duplicate state: %v", err)
	}
	h.States = nil
	h.Runs = []RunInfo{{ID: 1}}
	if err := h.Validate(); err == nil {
		t.Fatal("misnumbered run accepted")
	}
}

func TestDict(t *testing.T) {
	var d Dict
	if d.ID("a") != 0 || d.ID("b") != 1 || d.ID("a") != 0 || d.Len() != 2 {
		t.Fatal("dict ids")
	}
	if id, ok := d.Lookup("b"); !ok || id != 1 {
		t.Fatal("lookup")
	}
	if !slices.Equal(d.Names(), []string{"a", "b"}) {
		t.Fatal("names")
	}
}

func TestCanonicalAndFloat(t *testing.T) {
	r := Record{Kind: KindState, T: 3, ID: 4, Value: 99, Tag: 5}
	c := r.Canonical()
	if c != State(0, 0, 3, 4) {
		t.Fatalf("canonical state = %+v", c)
	}
	cr := Counter(0, 1, 2, 3, 2.5)
	if cr.Float() != 2.5 || cr.Canonical() != cr {
		t.Fatal("counter value")
	}
	s := Send(0, 0, 10, 5, 1, 8, 0, 0)
	if s.EndTime() != 10 {
		t.Fatal("EndTime must not precede T")
	}
}

// refMatch is the matching rule written plainly: scan for the earliest
// pending opposite side of the same (run, pair, tag, communicator), an
// any-source receive taking the earliest pending send to its process.
func refMatch(recs []Record) (pairs []string, unSends, unRecvs int) {
	var sends, recvs []*Record
	take := func(list []*Record, ok func(*Record) bool) ([]*Record, *Record) {
		best := -1
		for i, x := range list {
			if ok(x) && (best < 0 || Less(x, list[best])) {
				best = i
			}
		}
		if best < 0 {
			return list, nil
		}
		x := list[best]
		return slices.Delete(list, best, best+1), x
	}
	for i := range recs {
		r := &recs[i]
		switch r.Kind {
		case KindSend:
			var o *Record
			recvs, o = take(recvs, func(x *Record) bool {
				return x.Peer == r.Proc && x.Proc == r.Peer && x.Run == r.Run && x.Tag == r.Tag && x.Comm == r.Comm
			})
			if o == nil {
				recvs, o = take(recvs, func(x *Record) bool {
					return x.Peer == NoPeer && x.Proc == r.Peer && x.Run == r.Run && x.Tag == r.Tag && x.Comm == r.Comm
				})
			}
			if o == nil {
				sends = append(sends, r)
				continue
			}
			pairs = append(pairs, fmt.Sprintf("%v|%v", *r, *o))
		case KindRecv:
			o := (*Record)(nil)
			sends, o = take(sends, func(x *Record) bool {
				return (r.Peer == NoPeer || x.Proc == r.Peer) && x.Peer == r.Proc && x.Run == r.Run && x.Tag == r.Tag && x.Comm == r.Comm
			})
			if o == nil {
				recvs = append(recvs, r)
				continue
			}
			pairs = append(pairs, fmt.Sprintf("%v|%v", *o, *r))
		}
	}
	return pairs, len(sends), len(recvs)
}

// TestMatcherReference checks Matcher against refMatch on random traffic
// with more lanes than the matcher's lane cache holds, so that cached
// lanes are evicted and found again.
func TestMatcherReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, procs := range []int32{3, 40, 200} {
		// Traffic runs over a pool of pairs: 200 processes give 600 pairs
		// and up to 7,200 lanes.
		type pair struct{ src, dst int32 }
		var pool []pair
		for range 3 * procs {
			pool = append(pool, pair{rng.Int32N(procs), rng.Int32N(procs)})
		}
		var recs []Record
		for i := 0; i < 20000; i++ {
			pr := pool[rng.IntN(len(pool))]
			src, dst := pr.src, pr.dst
			tag, comm, run := rng.Int32N(3), rng.Int32N(2), rng.Int32N(2)
			tm := int64(i)
			switch {
			case rng.IntN(2) == 0:
				recs = append(recs, Send(run, src, tm, tm+1, dst, int64(i), tag, comm))
			case rng.IntN(8) == 0:
				recs = append(recs, Recv(run, dst, tm, tm+1, NoPeer, int64(i), tag, comm))
			default:
				recs = append(recs, Recv(run, dst, tm, tm+1, src, int64(i), tag, comm))
			}
		}
		want, ws, wr := refMatch(recs)
		var got []string
		m := Matcher{OnMatch: func(s, r *Record) { got = append(got, fmt.Sprintf("%v|%v", *s, *r)) }}
		for i := range recs {
			m.Add(&recs[i])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d processes: %d matches differ from the reference's %d", procs, len(got), len(want))
		}
		s, r := m.Unmatched()
		if len(s) != ws || len(r) != wr {
			t.Fatalf("%d processes: unmatched %d sends %d receives, reference %d %d", procs, len(s), len(r), ws, wr)
		}
		if len(want) < 2500 {
			t.Fatalf("%d processes: only %d matches; the traffic does not exercise the matcher", procs, len(want))
		}
	}
}

func TestIsMPICall(t *testing.T) {
	for name, want := range map[string]bool{
		"MPI_Send": true, "PMPI_Recv": true, "mpi_allreduce_": true, "Mpi_Wait": true,
		"MPI": false, "MPIX_Comm_revoke": false, "compute": false, "": false, "my_MPI_Send": false,
	} {
		if got := IsMPICall(name); got != want {
			t.Errorf("IsMPICall(%q) = %v, want %v", name, got, want)
		}
	}
	r := RegionDef{Label: "halo exchange", Function: "MPI_Sendrecv"}
	if !r.IsMPI() {
		t.Errorf("a region whose function is MPI_Sendrecv is not an MPI call")
	}
}

// TestSlots checks that Slots gives each held value back under its id,
// reuses only freed ids, and ignores ids that are not held.
func TestSlots(t *testing.T) {
	var s Slots[string]
	a, b, c := s.Put("a"), s.Put("b"), s.Put("c")
	if a != 0 || b != 1 || c != 2 || s.Len() != 3 {
		t.Fatalf("ids %d %d %d, %d held; want 0 1 2, 3 held", a, b, c, s.Len())
	}
	if v := s.Take(b); v != "b" {
		t.Fatalf("Take(%d) = %q, want b", b, v)
	}
	if v := s.Take(b); v != "" || s.Len() != 2 {
		t.Fatalf("second Take(%d) = %q with %d held; want the zero value and 2 held", b, v, s.Len())
	}
	if v := s.Take(7); v != "" || s.Take(-1) != "" {
		t.Fatalf("Take of an id never given = %q, want the zero value", v)
	}
	// b's id is freed once only, so two Puts do not share it.
	d, e := s.Put("d"), s.Put("e")
	if d != b || e != 3 {
		t.Fatalf("ids after freeing %d: %d %d, want %d 3", b, d, e, b)
	}
	for id, want := range map[int64]string{a: "a", c: "c", d: "d", e: "e"} {
		if v := s.Take(id); v != want {
			t.Errorf("Take(%d) = %q, want %q", id, v, want)
		}
	}
	if s.Len() != 0 {
		t.Errorf("%d held after taking every one, want 0", s.Len())
	}
}

// refusing is a Writer (no AddBatch) that refuses the record with T == bad.
type refusing struct {
	Memory
	bad int64
}

func (r *refusing) Add(rec Record) error {
	if rec.T == r.bad {
		return errors.New("refused")
	}
	return r.Memory.Add(rec)
}

// TestAddBatch checks AddBatch on a Writer without AddBatch: the records
// in order, and the count before a refused one.
func TestAddBatch(t *testing.T) {
	recs := []Record{State(0, 0, 10, 1), State(0, 1, 20, 2), State(0, 0, 30, 3)}
	w := &refusing{bad: -1}
	if n, err := AddBatch(w, recs); n != 3 || err != nil || !slices.Equal(w.Records, recs) {
		t.Fatalf("AddBatch = %d, %v, records %v", n, err, w.Records)
	}
	w = &refusing{bad: 20}
	if n, err := AddBatch(w, recs); n != 1 || err == nil || len(w.Records) != 1 {
		t.Fatalf("AddBatch refusing the second = %d, %v, records %v", n, err, w.Records)
	}
}
