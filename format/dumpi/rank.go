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
	comms   map[int32]bool
}

// decodeRank decodes one rank's file into time-ordered records.
func decodeRank(b []byte, rank, procs int32, origin int64, h *trace.Header, comms map[int32]bool, seen map[int]bool) ([]trace.Record, error) {
	ix, err := readIndex(b)
	if err != nil {
		return nil, err
	}
	fh, err := readHeader(b, ix.header)
	if err != nil {
		return nil, err
	}
	v := fh.version
	if v[0] > 1 || (v[0] == 0 && (v[1] < 6 || v[1] == 6 && v[2] < 3)) {
		return nil, &offsetErr{ix.header, fmt.Sprintf("DUMPI version %d.%d.%d is not supported (0.6.3 to 1.x)", v[0], v[1], v[2])}
	}
	sizes, err := readSizes(b, ix.sizes)
	if err != nil {
		return nil, err
	}
	rd := &rankDecoder{d: &decoder{b: b, off: int(ix.body), what: "body"}, rank: rank, procs: procs,
		sizes: sizes, pending: map[int32]int{}, h: h, comms: comms}
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
		if err := rd.args(c, mask, start); err != nil {
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

func (rd *rankDecoder) comm(c uint16) int32 {
	rd.comms[int32(c)] = true
	return int32(c)
}

func (rd *rankDecoder) peer(p int32) int32 {
	if p < 0 || p >= rd.procs {
		return trace.NoPeer
	}
	return p
}

// args decodes the arguments of a call and adds its records.
func (rd *rankDecoder) args(c call, mask uint8, start int) error {
	d := rd.d
	rd.recs = append(rd.recs, trace.Enter(0, rd.rank, c.enter, int32(c.label)))
	msg := func(r trace.Record) { rd.recs = append(rd.recs, r) }
	switch name := functionNames[c.label]; name {
	case "MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend":
		count, dt, dest, tag, cm := d.i32(), d.u16(), d.i32(), d.i32(), d.u16()
		if p := rd.peer(dest); p != trace.NoPeer {
			msg(trace.Send(0, rd.rank, c.enter, c.exit, p, rd.bytes(count, dt), tag, rd.comm(cm)))
		}
	case "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend":
		count, dt, dest, tag, cm, req := d.i32(), d.u16(), d.i32(), d.i32(), d.u16(), d.i32()
		if p := rd.peer(dest); p != trace.NoPeer {
			r := trace.Send(0, rd.rank, c.enter, 0, p, rd.bytes(count, dt), tag, rd.comm(cm))
			r.Seq = req
			rd.pending[req] = len(rd.recs)
			msg(r)
		}
	case "MPI_Recv":
		count, dt, src, tag, cm := d.i32(), d.u16(), d.i32(), d.i32(), d.u16()
		st := d.statuses(mask)
		msg(rd.recv(c.enter, c.exit, count, dt, src, tag, cm, st))
	case "MPI_Irecv":
		count, dt, src, tag, cm, req := d.i32(), d.u16(), d.i32(), d.i32(), d.u16(), d.i32()
		r := rd.recv(c.enter, 0, count, dt, src, tag, cm, nil)
		r.Seq = req
		rd.pending[req] = len(rd.recs)
		msg(r)
	case "MPI_Sendrecv":
		sc, st, dest, stag := d.i32(), d.u16(), d.i32(), d.i32()
		rc, rt, src, rtag, cm := d.i32(), d.u16(), d.i32(), d.i32(), d.u16()
		sts := d.statuses(mask)
		if p := rd.peer(dest); p != trace.NoPeer {
			msg(trace.Send(0, rd.rank, c.enter, c.exit, p, rd.bytes(sc, st), stag, rd.comm(cm)))
		}
		msg(rd.recv(c.enter, c.exit, rc, rt, src, rtag, cm, sts))
	case "MPI_Get_count":
		d.statuses(mask)
		d.u16()
		d.i32()
	case "MPI_Buffer_attach", "MPI_Buffer_detach":
		d.i32()
	case "MPI_Wait":
		req := d.i32()
		rd.complete(req, c.exit, d.statuses(mask))
	case "MPI_Test":
		req, flag := d.i32(), d.i32()
		st := d.statuses(mask)
		if flag != 0 {
			rd.complete(req, c.exit, st)
		}
	case "MPI_Request_free":
		d.i32()
	case "MPI_Waitany", "MPI_Testany":
		d.i32()
		reqs := d.ints()
		idx := d.i32()
		flag := int32(1)
		if name == "MPI_Testany" {
			flag = d.i32()
		}
		st := d.statuses(mask)
		if flag != 0 && idx >= 0 && int(idx) < len(reqs) {
			rd.complete(reqs[idx], c.exit, st)
		}
	case "MPI_Waitall", "MPI_Testall":
		d.i32()
		reqs := d.ints()
		flag := int32(1)
		if name == "MPI_Testall" {
			flag = d.i32()
		}
		st := d.statuses(mask)
		if flag != 0 {
			for i, q := range reqs {
				var s []status
				if i < len(st) {
					s = st[i : i+1]
				}
				rd.complete(q, c.exit, s)
			}
		}
	case "MPI_Waitsome", "MPI_Testsome":
		// count, requests, outcount, indices, statuses: the same layout
		// for both (sst-dumpi's dumpi_write_waitsome/testsome).
		d.i32()
		reqs := d.ints()
		d.i32()
		idx := d.ints()
		st := d.statuses(mask)
		for i, k := range idx {
			if k >= 0 && int(k) < len(reqs) {
				var s []status
				if i < len(st) {
					s = st[i : i+1]
				}
				rd.complete(reqs[k], c.exit, s)
			}
		}
	case "MPI_Barrier":
		cm := d.u16()
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpBarrier, trace.NoPeer, 0, rd.comm(cm)))
	case "MPI_Bcast":
		count, dt, root, cm := d.i32(), d.u16(), d.i32(), d.u16()
		rd.coll(c, name, count, dt, root, cm)
	case "MPI_Reduce":
		count, dt := d.i32(), d.u16()
		d.u8()
		root, cm := d.i32(), d.u16()
		rd.coll(c, name, count, dt, root, cm)
	case "MPI_Allreduce", "MPI_Scan", "MPI_Exscan":
		count, dt := d.i32(), d.u16()
		d.u8()
		cm := d.u16()
		rd.coll(c, name, count, dt, -1, cm)
	case "MPI_Gather":
		rank, sc, st, root, cm := d.i32(), d.i32(), d.u16(), d.i32(), d.u16()
		if rank == root {
			d.i32()
			d.u16()
		}
		rd.coll(c, name, sc, st, root, cm)
	case "MPI_Gatherv":
		rank := d.i32()
		d.i32()
		sc, st, root, cm := d.i32(), d.u16(), d.i32(), d.u16()
		if rank == root {
			d.ints()
			d.ints()
		}
		d.u16()
		rd.coll(c, name, sc, st, root, cm)
	case "MPI_Scatter":
		rank, rc, rt, root, cm := d.i32(), d.i32(), d.u16(), d.i32(), d.u16()
		count, dt := rc, rt
		if rank == root {
			count, dt = d.i32(), d.u16()
		}
		rd.coll(c, name, count, dt, root, cm)
	case "MPI_Scatterv":
		rank := d.i32()
		d.i32()
		st := d.u16()
		rc, rt, root, cm := d.i32(), d.u16(), d.i32(), d.u16()
		var total int64
		if rank == root {
			total = rd.total(d.ints(), st)
			d.ints()
		} else {
			total = rd.bytes(rc, rt)
		}
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpScatter, rd.peer(root), total, rd.comm(cm)))
	case "MPI_Allgather", "MPI_Alltoall":
		sc, st := d.i32(), d.u16()
		d.i32()
		d.u16()
		cm := d.u16()
		rd.coll(c, name, sc, st, -1, cm)
	case "MPI_Allgatherv":
		d.i32()
		sc, st := d.i32(), d.u16()
		d.ints()
		d.ints()
		d.u16()
		cm := d.u16()
		rd.coll(c, name, sc, st, -1, cm)
	case "MPI_Alltoallv":
		d.i32()
		scs := d.ints()
		d.ints()
		st := d.u16()
		d.ints()
		d.ints()
		d.u16()
		cm := d.u16()
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpAlltoall, trace.NoPeer, rd.total(scs, st), rd.comm(cm)))
	case "MPI_Reduce_scatter":
		d.i32()
		rcs := d.ints()
		dt := d.u16()
		d.u8()
		cm := d.u16()
		msg(trace.Coll(0, rd.rank, c.enter, c.exit, trace.OpReduceScatter, trace.NoPeer, rd.total(rcs, dt), rd.comm(cm)))
	case "MPI_Comm_size", "MPI_Comm_rank":
		rd.comm(d.u16())
		d.i32()
	case "MPI_Init":
		argc := d.count(4)
		for i := 0; i < argc; i++ {
			d.take(d.count(1))
		}
	case "MPI_Finalize", "MPI_Wtime", "MPI_Wtick":
	default:
		return rd.unsupported(name, start)
	}
	rd.recs = append(rd.recs, trace.Exit(0, rd.rank, c.exit, int32(c.label)))
	return nil
}

func (rd *rankDecoder) unsupported(name string, start int) error {
	return &offsetErr{int64(start), fmt.Sprintf("%s: the importer does not decode this call's arguments (DUMPI records carry no length, so it cannot skip it)", name)}
}

// coll adds a collective of count elements of dt.
func (rd *rankDecoder) coll(c call, name string, count int32, dt uint16, root int32, cm uint16) {
	op, _ := trace.ParseCollectiveOp(name)
	peer := trace.NoPeer
	if root >= 0 && cm == commWorld {
		peer = rd.peer(root)
	}
	rd.recs = append(rd.recs, trace.Coll(0, rd.rank, c.enter, c.exit, op, peer, rd.bytes(count, dt), rd.comm(cm)))
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
