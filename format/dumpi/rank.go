package dumpi

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/parscope/parscope/trace"
)

// call is one decoded record.
type call struct {
	label       int
	enter, exit int64 // wall-clock ns since the origin
}

// rankDecoder turns one rank's records into trace records.
type rankDecoder struct {
	d       *decoder
	rank    int32
	procs   int32
	sizes   []int64
	recs    []trace.Record
	pending map[int32]int // request -> index of its message in recs
	h       *trace.Header
	cs      *commSet
	// the rank's group and communicator handles whose members it knows
	groups      map[uint16][]int32
	commMembers map[uint16][]int32
}

// decodeRank decodes one rank's file into time-ordered records.
func decodeRank(b []byte, rank, procs int32, origin int64, h *trace.Header, cs *commSet, seen map[int]bool) ([]trace.Record, error) {
	ix, err := readIndex(b)
	if err != nil {
		return nil, err
	}
	fh, err := readHeader(b, ix.header)
	if err != nil {
		return nil, err
	}
	sizes, err := readSizes(b, ix.sizes)
	if err != nil {
		return nil, err
	}
	rd := &rankDecoder{d: &decoder{b: b, off: int(ix.body), what: "body", ver: fh.version}, rank: rank, procs: procs,
		sizes: sizes, pending: map[int32]int{}, h: h, cs: cs,
		groups: map[uint16][]int32{}, commMembers: map[uint16][]int32{}}
	d := rd.d
	d.u32() // cpu time offset
	wallOff := int64(d.u32())
	if origin == 0 {
		origin = wallOff
	}
	for d.err == nil {
		start := d.off
		d.what = "record label"
		lab := int(d.u16())
		if d.err != nil {
			break
		}
		if lab == labelEnd {
			break
		}
		if lab > labelEnd {
			d.off = start
			d.fail("unknown function label %d (the last is %d)", lab, labelEnd)
			break
		}
		d.what = "function arguments"
		if lab < len(functionNames) {
			d.what = functionNames[lab]
		}
		mask := d.u8()
		if mask&maskThread != 0 {
			d.u16()
		}
		if mask&maskCPU != 0 {
			d.take(12)
		}
		var c call
		c.label = lab
		if mask&maskWall != 0 {
			s0, n0 := int64(d.u16()), int64(d.u32())
			s1, n1 := int64(d.u16()), int64(d.u32())
			c.enter = (s0+wallOff-origin)*1e9 + n0
			c.exit = (s1+wallOff-origin)*1e9 + n1
		}
		if mask&maskPerfCtr != 0 {
			n := int(d.u8())
			d.take(16 * n)
		}
		if c.exit < c.enter {
			c.exit = c.enter
		}
		if lab >= len(functionNames) {
			// Function_enter/exit records of the user-function profiler.
			d.u64()
			continue
		}
		d.mask = mask
		if err := rd.args(c, start); err != nil {
			return nil, err
		}
		if d.err != nil {
			break
		}
		seen[lab] = true
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(rd.pending) > 0 {
		h.Repair(RepairUnwaitedRequest, int64(len(rd.pending)))
	}
	slices.SortStableFunc(rd.recs, func(a, b trace.Record) int { return cmp.Compare(a.T, b.T) })
	return rd.recs, nil
}

// bytes returns count × the size of datatype dt.
func (rd *rankDecoder) bytes(count int32, dt uint16) int64 {
	if count <= 0 || int(dt) >= len(rd.sizes) || rd.sizes[dt] < 0 {
		return 0
	}
	return int64(count) * rd.sizes[dt]
}

// total returns the bytes of counts[i] elements of dt, summed over i.
func (rd *rankDecoder) total(counts []int32, dt uint16) int64 {
	var sum int64
	for _, n := range counts {
		sum += rd.bytes(n, dt)
	}
	return sum
}

func (rd *rankDecoder) peer(p int32) int32 {
	if p < 0 || p >= rd.procs {
		return trace.NoPeer
	}
	return p
}

// args decodes the arguments of a call and adds its records. The
// arguments are read by the decoders generated from calls.txt; the calls
// below are the ones whose arguments become messages, collectives,
// request completions or communicators, every other call becomes a region
// only.
func (rd *rankDecoder) args(c call, start int) error {
	d := rd.d
	rd.recs = append(rd.recs, trace.Enter(0, rd.rank, c.enter, int32(c.label)))
	msg := func(r trace.Record) { rd.recs = append(rd.recs, r) }
	switch name := functionNames[c.label]; name {
	case "MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend":
		var a sendArgs // the same layout for all four
		d.readSend(&a)
		if p := rd.peer(a.dest); p != trace.NoPeer {
			msg(trace.Send(0, rd.rank, c.enter, c.exit, p, rd.bytes(a.count, a.datatype), a.tag, rd.comm(a.comm)))
		}
	case "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend":
		var a isendArgs
		d.readIsend(&a)
		if p := rd.peer(a.dest); p != trace.NoPeer {
			r := trace.Send(0, rd.rank, c.enter, 0, p, rd.bytes(a.count, a.datatype), a.tag, rd.comm(a.comm))
			r.Seq = a.request
			rd.pending[a.request] = len(rd.recs)
			msg(r)
		}
	case "MPI_Recv":
		var a recvArgs
		d.readRecv(&a)
		msg(rd.recv(c.enter, c.exit, a.count, a.datatype, a.source, a.tag, a.comm, a.status))
	case "MPI_Irecv":
		var a irecvArgs
		d.readIrecv(&a)
		r := rd.recv(c.enter, 0, a.count, a.datatype, a.source, a.tag, a.comm, nil)
		r.Seq = a.request
		rd.pending[a.request] = len(rd.recs)
		msg(r)
	case "MPI_Sendrecv":
		var a sendrecvArgs
		d.readSendrecv(&a)
		if p := rd.peer(a.dest); p != trace.NoPeer {
			msg(trace.Send(0, rd.rank, c.enter, c.exit, p, rd.bytes(a.sendcount, a.sendtype), a.sendtag, rd.comm(a.comm)))
		}
		msg(rd.recv(c.enter, c.exit, a.recvcount, a.recvtype, a.source, a.recvtag, a.comm, a.status))
	case "MPI_Sendrecv_replace":
		var a sendrecvReplaceArgs
		d.readSendrecvReplace(&a)
		if p := rd.peer(a.dest); p != trace.NoPeer {
			msg(trace.Send(0, rd.rank, c.enter, c.exit, p, rd.bytes(a.count, a.datatype), a.sendtag, rd.comm(a.comm)))
		}
		msg(rd.recv(c.enter, c.exit, a.count, a.datatype, a.source, a.recvtag, a.comm, a.status))
	case "MPI_Wait", "MPIO_Wait":
		var a waitArgs
		d.readWait(&a)
		rd.complete(a.request, c.exit, a.status)
	case "MPI_Test", "MPIO_Test":
		var a testArgs
		d.readTest(&a)
		if a.flag != 0 {
			rd.complete(a.request, c.exit, a.status)
		}
	case "MPI_Waitany":
		var a waitanyArgs
		d.readWaitany(&a)
		rd.completeIndex(a.requests, a.index, 1, c.exit, a.status)
	case "MPI_Testany":
		var a testanyArgs
		d.readTestany(&a)
		rd.completeIndex(a.requests, a.index, a.flag, c.exit, a.status)
	case "MPIO_Waitany":
		var a ioWaitanyArgs
		d.readIoWaitany(&a)
		rd.completeIndex(a.requests, a.index, 1, c.exit, a.statuses)
	case "MPIO_Testany":
		var a ioTestanyArgs
		d.readIoTestany(&a)
		rd.completeIndex(a.requests, a.index, a.flag, c.exit, a.statuses)
	case "MPI_Waitall", "MPIO_Waitall":
		var a waitallArgs
		d.readWaitall(&a)
		rd.completeAll(a.requests, 1, c.exit, a.statuses)
	case "MPI_Testall", "MPIO_Testall":
		var a testallArgs
		d.readTestall(&a)
		rd.completeAll(a.requests, a.flag, c.exit, a.statuses)
	case "MPI_Waitsome", "MPI_Testsome", "MPIO_Waitsome", "MPIO_Testsome":
		var a waitsomeArgs // the same layout for all four
		d.readWaitsome(&a)
		for i, k := range a.indices {
			if k >= 0 && int(k) < len(a.requests) {
				rd.complete(a.requests[k], c.exit, one(a.statuses, i))
			}
		}
	case "MPI_Barrier":
		var a barrierArgs
		d.readBarrier(&a)
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpBarrier, trace.NoPeer, 0, rd.comm(a.comm)))
	case "MPI_Bcast":
		var a bcastArgs
		d.readBcast(&a)
		rd.coll(c, name, a.count, a.datatype, a.root, a.comm)
	case "MPI_Reduce":
		var a reduceArgs
		d.readReduce(&a)
		rd.coll(c, name, a.count, a.datatype, a.root, a.comm)
	case "MPI_Allreduce", "MPI_Scan", "MPI_Exscan":
		var a allreduceArgs // the same layout for all three
		d.readAllreduce(&a)
		rd.coll(c, name, a.count, a.datatype, -1, a.comm)
	case "MPI_Gather":
		var a gatherArgs
		d.readGather(&a)
		rd.coll(c, name, a.sendcount, a.sendtype, a.root, a.comm)
	case "MPI_Gatherv":
		var a gathervArgs
		d.readGatherv(&a)
		rd.coll(c, name, a.sendcount, a.sendtype, a.root, a.comm)
	case "MPI_Scatter":
		var a scatterArgs
		d.readScatter(&a)
		count, dt := a.recvcount, a.recvtype
		if a.commrank == a.root {
			count, dt = a.sendcount, a.sendtype
		}
		rd.coll(c, name, count, dt, a.root, a.comm)
	case "MPI_Scatterv":
		var a scattervArgs
		d.readScatterv(&a)
		var total int64
		if a.commrank == a.root {
			total = rd.total(a.sendcounts, a.sendtype)
		} else {
			total = rd.bytes(a.recvcount, a.recvtype)
		}
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpScatter, rd.rootPeer(a.root, a.comm), total, rd.comm(a.comm)))
	case "MPI_Allgather", "MPI_Alltoall":
		var a allgatherArgs // the same layout for both
		d.readAllgather(&a)
		rd.coll(c, name, a.sendcount, a.sendtype, -1, a.comm)
	case "MPI_Allgatherv":
		var a allgathervArgs
		d.readAllgatherv(&a)
		rd.coll(c, name, a.sendcount, a.sendtype, -1, a.comm)
	case "MPI_Alltoallv":
		var a alltoallvArgs
		d.readAlltoallv(&a)
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpAlltoall, trace.NoPeer, rd.total(a.sendcounts, a.sendtype), rd.comm(a.comm)))
	case "MPI_Alltoallw":
		var a alltoallwArgs
		d.readAlltoallw(&a)
		var total int64
		for i, n := range a.sendcounts {
			if i < len(a.sendtypes) {
				total += rd.bytes(n, a.sendtypes[i])
			}
		}
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpAlltoall, trace.NoPeer, total, rd.comm(a.comm)))
	case "MPI_Reduce_scatter":
		var a reduceScatterArgs
		d.readReduceScatter(&a)
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpReduceScatter, trace.NoPeer, rd.total(a.recvcounts, a.datatype), rd.comm(a.comm)))
	default:
		if !rd.groupCall(name) && !d.skipArgs(c.label) {
			return &offsetErr{int64(start), fmt.Sprintf("%s: SST DUMPI never writes a record with this label", name)}
		}
	}
	rd.recs = append(rd.recs, trace.Exit(0, rd.rank, c.exit, int32(c.label)))
	return nil
}

// one returns the i-th status as a one-element slice, or nil.
func one(st []status, i int) []status {
	if i < len(st) {
		return st[i : i+1]
	}
	return nil
}

// completeIndex completes requests[idx] when flag is set (Waitany/Testany).
func (rd *rankDecoder) completeIndex(reqs []int32, idx, flag int32, t int64, st []status) {
	if flag != 0 && idx >= 0 && int(idx) < len(reqs) {
		rd.complete(reqs[idx], t, st)
	}
}

// completeAll completes every request when flag is set (Waitall/Testall).
func (rd *rankDecoder) completeAll(reqs []int32, flag int32, t int64, st []status) {
	if flag == 0 {
		return
	}
	for i, q := range reqs {
		rd.complete(q, t, one(st, i))
	}
}

// coll adds a collective of count elements of dt.
func (rd *rankDecoder) coll(c call, name string, count int32, dt uint16, root int32, cm uint16) {
	op, _ := trace.ParseCollectiveOp(name)
	rd.recs = append(rd.recs, trace.Coll(0, rd.rank, c.enter, c.exit, op, rd.rootPeer(root, cm), rd.bytes(count, dt), rd.comm(cm)))
}

// recv builds a receive; a wildcard source or tag is resolved from a
// status only when the status names a rank of the run.
func (rd *rankDecoder) recv(t, end int64, count int32, dt uint16, src, tag int32, cm uint16, st []status) trace.Record {
	r := trace.Recv(0, rd.rank, t, end, rd.peer(src), rd.bytes(count, dt), tag, rd.comm(cm))
	if src == anySource {
		r.Flags |= trace.FlagAnySource
	}
	rd.resolve(&r, st)
	return r
}

func (rd *rankDecoder) resolve(r *trace.Record, st []status) {
	if len(st) != 1 || r.Kind != trace.KindRecv {
		return
	}
	s := st[0]
	if r.Flags&trace.FlagAnySource != 0 && s.source >= 0 && s.source < rd.procs {
		r.Peer = s.source
		r.Flags &^= trace.FlagAnySource
	}
	if r.Tag == anyTag && s.tag >= 0 && r.Flags&trace.FlagAnySource == 0 {
		r.Tag = s.tag
	}
}

// complete ends the message of request req at t.
func (rd *rankDecoder) complete(req int32, t int64, st []status) {
	i, ok := rd.pending[req]
	if !ok {
		return
	}
	delete(rd.pending, req)
	r := &rd.recs[i]
	r.End = t
	rd.resolve(r, st)
}
