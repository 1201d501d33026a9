/*
 * wrap.c: the MPI functions the shim intercepts. Each records one event
 * (see shim.h) around the PMPI call it forwards to; the call site is the
 * wrapper's return address. Without PARSCOPE_MPI_DIR (ps_on == 0) every
 * wrapper only forwards.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "../include/parscope.h"

#define SITE ((uint64_t)(uintptr_t)__builtin_return_address(0))

static ps_event ev(uint32_t fn, uint64_t site, int64_t t)
{
	ps_event e;
	memset(&e, 0, sizeof e);
	e.fn = fn;
	e.site = site;
	e.t = t;
	e.peer = PS_NULL;
	e.src = PS_NULL;
	e.stag = PS_ANY;
	return e;
}

/* status fills e's received size and source from a status. */
static void status(ps_event *e, const MPI_Status *s)
{
	int n = 0;
	if (!s)
		return;
	if (PMPI_Get_count(s, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED)
		e->bytes = n;
	e->src = ps_peer(s->MPI_SOURCE);
	e->stag = ps_tag(s->MPI_TAG);
}

/* message ends e, begun before the call, and fills in the message: its
 * communicator, peer, tag and size (count elements of dt). */
static void message(ps_event *e, MPI_Comm comm, int peer, int32_t tag, int count, MPI_Datatype dt)
{
	e->end = ps_now();
	e->comm = ps_comm(comm);
	e->peer = ps_peer(peer);
	e->tag = tag;
	e->bytes = ps_bytes(count, dt);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		ps_start();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		ps_start();
	return rc;
}

int MPI_Finalize(void)
{
	ps_finish();
	return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...)
{
	va_list ap;
	const char *name;
	ps_event e;
	if (level != PARSCOPE_PCONTROL_BEGIN && level != PARSCOPE_PCONTROL_END)
		return PMPI_Pcontrol(level);
	if (!ps_on)
		return MPI_SUCCESS;
	va_start(ap, level);
	name = va_arg(ap, const char *);
	va_end(ap);
	e = ev(PS_FN_Pcontrol, SITE, ps_now());
	e.end = e.t;
	e.tag = (int32_t)ps_string(name);
	ps_event_write(level == PARSCOPE_PCONTROL_BEGIN ? PS_REC_BEGIN : PS_REC_END, &e);
	return MPI_SUCCESS;
}

/* ---- blocking point-to-point ---- */

#define BLOCKING_SEND(NAME)                                                                                  \
	int MPI_##NAME(const void *b, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)          \
	{                                                                                                     \
		ps_event e;                                                                                   \
		int rc;                                                                                       \
		if (!ps_on)                                                                                   \
			return PMPI_##NAME(b, count, dt, dest, tag, comm);                                    \
		e = ev(PS_FN_##NAME, SITE, ps_now());                                                         \
		rc = PMPI_##NAME(b, count, dt, dest, tag, comm);                                              \
		message(&e, comm, dest, tag, count, dt);                                                      \
		ps_event_write(PS_REC_SEND, &e);                                                              \
		return rc;                                                                                    \
	}

BLOCKING_SEND(Send)
BLOCKING_SEND(Bsend)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Rsend)

int MPI_Recv(void *b, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	ps_event e;
	MPI_Status mine;
	int rc;
	if (!ps_on)
		return PMPI_Recv(b, count, dt, src, tag, comm, st);
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	e = ev(PS_FN_Recv, SITE, ps_now());
	rc = PMPI_Recv(b, count, dt, src, tag, comm, st);
	message(&e, comm, src, ps_tag(tag), count, dt);
	if (rc == MPI_SUCCESS)
		status(&e, st);
	ps_event_write(PS_REC_RECV, &e);
	return rc;
}

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc_, MPI_Datatype rt,
		 int src, int rtag, MPI_Comm comm, MPI_Status *status_)
{
	ps_event e, r;
	MPI_Status mine;
	int rc;
	if (!ps_on)
		return PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc_, rt, src, rtag, comm, status_);
	if (status_ == MPI_STATUS_IGNORE)
		status_ = &mine;
	e = ev(PS_FN_Sendrecv, SITE, ps_now());
	rc = PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc_, rt, src, rtag, comm, status_);
	message(&e, comm, dest, stag, sc, st);
	r = e;
	ps_event_write(PS_REC_SEND, &e);
	r.peer = ps_peer(src);
	r.tag = ps_tag(rtag);
	r.bytes = ps_bytes(rc_, rt);
	if (rc == MPI_SUCCESS)
		status(&r, status_);
	ps_event_write(PS_REC_RECV, &r);
	return rc;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag, MPI_Comm comm,
			 MPI_Status *status_)
{
	ps_event e, r;
	MPI_Status mine;
	int rc;
	if (!ps_on)
		return PMPI_Sendrecv_replace(b, count, dt, dest, stag, src, rtag, comm, status_);
	if (status_ == MPI_STATUS_IGNORE)
		status_ = &mine;
	e = ev(PS_FN_Sendrecv_replace, SITE, ps_now());
	rc = PMPI_Sendrecv_replace(b, count, dt, dest, stag, src, rtag, comm, status_);
	message(&e, comm, dest, stag, count, dt);
	r = e;
	ps_event_write(PS_REC_SEND, &e);
	r.peer = ps_peer(src);
	r.tag = ps_tag(rtag);
	r.bytes = e.bytes;
	if (rc == MPI_SUCCESS)
		status(&r, status_);
	ps_event_write(PS_REC_RECV, &r);
	return rc;
}

/* ---- non-blocking point-to-point ---- */

#define NONBLOCKING_SEND(NAME)                                                                               \
	int MPI_##NAME(const void *b, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,         \
		       MPI_Request *req)                                                                     \
	{                                                                                                     \
		ps_event e;                                                                                   \
		int rc;                                                                                       \
		if (!ps_on)                                                                                   \
			return PMPI_##NAME(b, count, dt, dest, tag, comm, req);                               \
		e = ev(PS_FN_##NAME, SITE, ps_now());                                                         \
		rc = PMPI_##NAME(b, count, dt, dest, tag, comm, req);                                         \
		message(&e, comm, dest, tag, count, dt);                                                      \
		e.req = rc == MPI_SUCCESS ? ps_req(*req) : 0;                                                 \
		ps_event_write(PS_REC_ISEND, &e);                                                             \
		return rc;                                                                                    \
	}

NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Ibsend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Irsend)

int MPI_Irecv(void *b, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
	ps_event e;
	int rc;
	if (!ps_on)
		return PMPI_Irecv(b, count, dt, src, tag, comm, req);
	e = ev(PS_FN_Irecv, SITE, ps_now());
	rc = PMPI_Irecv(b, count, dt, src, tag, comm, req);
	message(&e, comm, src, ps_tag(tag), count, dt);
	e.req = rc == MPI_SUCCESS ? ps_req(*req) : 0;
	ps_event_write(PS_REC_IRECV, &e);
	return rc;
}

/* ---- completion ---- */

/* complete records that request r (saved before the call) completed at t. */
static void complete(uint32_t fn, uint64_t site, int64_t t, MPI_Request r, const MPI_Status *s)
{
	ps_event e;
	if (r == MPI_REQUEST_NULL)
		return;
	e = ev(fn, site, t);
	e.end = t;
	e.req = ps_req(r);
	status(&e, s);
	ps_event_write(PS_REC_COMPLETE, &e);
}

/* call records a Wait/Test call as a whole, for its call site. */
static void call(uint32_t fn, uint64_t site, int64_t t, int64_t end)
{
	ps_event e = ev(fn, site, t);
	e.end = end;
	ps_event_write(PS_REC_CALL, &e);
}

/* one records a Wait or Test call on one request begun at t, and, when done
 * (the call completed the request), the completion of r, the request saved
 * before the call. */
static void one(uint32_t fn, uint64_t site, int64_t t, MPI_Request r, const MPI_Status *st, int done)
{
	int64_t end = ps_now();
	call(fn, site, t, end);
	if (done)
		complete(fn, site, end, r, st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	MPI_Status mine;
	MPI_Request r;
	int64_t t;
	int rc;
	uint64_t site = SITE;
	if (!ps_on)
		return PMPI_Wait(req, st);
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	r = *req;
	t = ps_now();
	rc = PMPI_Wait(req, st);
	one(PS_FN_Wait, site, t, r, st, rc == MPI_SUCCESS);
	return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
	MPI_Status mine;
	MPI_Request r;
	int64_t t;
	int rc;
	uint64_t site = SITE;
	if (!ps_on)
		return PMPI_Test(req, flag, st);
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	r = *req;
	t = ps_now();
	rc = PMPI_Test(req, flag, st);
	one(PS_FN_Test, site, t, r, st, rc == MPI_SUCCESS && *flag);
	return rc;
}

/* many runs the Waitall/Testall, Waitany/Testany and Waitsome/Testsome
 * calls: it saves the requests before the call (the library resets them)
 * and substitutes its own statuses for MPI_STATUS(ES)_IGNORE. */
#define NLOCAL 64

static int many(uint32_t fn, uint64_t site, int n, MPI_Request reqs[], int *flag, int *idx, int *outcount,
		int indices[], MPI_Status sts[])
{
	MPI_Request rl[NLOCAL], *r = rl;
	MPI_Status sl[NLOCAL], *s = sl, *use;
	int64_t t, end;
	int rc, i, single = fn == PS_FN_Waitany || fn == PS_FN_Testany;
	if (n > NLOCAL) {
		r = malloc(sizeof *r * (size_t)n);
		s = malloc(sizeof *s * (size_t)n);
	}
	if (r)
		for (i = 0; i < n && i >= 0; i++)
			r[i] = reqs[i];
	if (single)
		use = sts == MPI_STATUS_IGNORE ? sl : sts;
	else
		use = sts == MPI_STATUSES_IGNORE ? s : sts;
	t = ps_now();
	if (!use) { /* no memory for statuses: forward without recording */
		free(r);
		return fn == PS_FN_Waitall ? PMPI_Waitall(n, reqs, sts)
		       : fn == PS_FN_Testall ? PMPI_Testall(n, reqs, flag, sts)
		       : fn == PS_FN_Waitsome ? PMPI_Waitsome(n, reqs, outcount, indices, sts)
					      : PMPI_Testsome(n, reqs, outcount, indices, sts);
	}
	switch (fn) {
	case PS_FN_Waitall:
		rc = PMPI_Waitall(n, reqs, use);
		break;
	case PS_FN_Testall:
		rc = PMPI_Testall(n, reqs, flag, use);
		break;
	case PS_FN_Waitany:
		rc = PMPI_Waitany(n, reqs, idx, use);
		break;
	case PS_FN_Testany:
		rc = PMPI_Testany(n, reqs, idx, flag, use);
		break;
	case PS_FN_Waitsome:
		rc = PMPI_Waitsome(n, reqs, outcount, indices, use);
		break;
	default:
		rc = PMPI_Testsome(n, reqs, outcount, indices, use);
		break;
	}
	end = ps_now();
	call(fn, site, t, end);
	if (rc == MPI_SUCCESS && r) {
		switch (fn) {
		case PS_FN_Waitall:
		case PS_FN_Testall:
			if (fn == PS_FN_Waitall || *flag)
				for (i = 0; i < n; i++)
					complete(fn, site, end, r[i], &use[i]);
			break;
		case PS_FN_Waitany:
		case PS_FN_Testany:
			if ((fn == PS_FN_Waitany || *flag) && *idx != MPI_UNDEFINED && *idx >= 0 && *idx < n)
				complete(fn, site, end, r[*idx], use);
			break;
		default:
			if (*outcount != MPI_UNDEFINED)
				for (i = 0; i < *outcount; i++)
					if (indices[i] >= 0 && indices[i] < n)
						complete(fn, site, end, r[indices[i]], &use[i]);
		}
	}
	if (r != rl)
		free(r);
	if (s != sl)
		free(s);
	return rc;
}

int MPI_Request_free(MPI_Request *req)
{
	uint64_t site = SITE;
	if (ps_on && req && *req != MPI_REQUEST_NULL) {
		ps_event e = ev(PS_FN_Request_free, site, ps_now());
		e.end = e.t;
		e.req = ps_req(*req);
		ps_event_write(PS_REC_COMPLETE, &e);
	}
	return PMPI_Request_free(req);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	if (!ps_on)
		return PMPI_Waitall(n, reqs, sts);
	return many(PS_FN_Waitall, SITE, n, reqs, NULL, NULL, NULL, NULL, sts);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	if (!ps_on)
		return PMPI_Testall(n, reqs, flag, sts);
	return many(PS_FN_Testall, SITE, n, reqs, flag, NULL, NULL, NULL, sts);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
	if (!ps_on)
		return PMPI_Waitany(n, reqs, idx, st);
	return many(PS_FN_Waitany, SITE, n, reqs, NULL, idx, NULL, NULL, st);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
	if (!ps_on)
		return PMPI_Testany(n, reqs, idx, flag, st);
	return many(PS_FN_Testany, SITE, n, reqs, flag, idx, NULL, NULL, st);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	if (!ps_on)
		return PMPI_Waitsome(n, reqs, outcount, indices, sts);
	return many(PS_FN_Waitsome, SITE, n, reqs, NULL, NULL, outcount, indices, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	if (!ps_on)
		return PMPI_Testsome(n, reqs, outcount, indices, sts);
	return many(PS_FN_Testsome, SITE, n, reqs, NULL, NULL, outcount, indices, sts);
}

/* ---- collectives ---- */

static void coll(uint32_t fn, uint64_t site, int64_t t, MPI_Comm comm, int root, int64_t bytes)
{
	ps_event e = ev(fn, site, t);
	e.end = ps_now();
	e.comm = ps_comm(comm);
	e.peer = root;
	e.bytes = bytes;
	ps_event_write(PS_REC_COLL, &e);
}

static int comm_size(MPI_Comm c)
{
	int n = 1;
	PMPI_Comm_size(c, &n);
	return n > 0 ? n : 1;
}

static int comm_rank(MPI_Comm c)
{
	int r = 0;
	PMPI_Comm_rank(c, &r);
	return r;
}

/* COLLECTIVE is the body of a collective's wrapper: it forwards ARGS to
 * PMPI_NAME and, when recording, times the call and records it on comm with
 * ROOT (-1 for none) and BYTES, an expression evaluated after the call. */
#define COLLECTIVE(NAME, ARGS, ROOT, BYTES)                        \
	do {                                                        \
		int64_t t;                                          \
		int rc;                                             \
		uint64_t site = SITE;                               \
		if (!ps_on)                                         \
			return PMPI_##NAME ARGS;                    \
		t = ps_now();                                       \
		rc = PMPI_##NAME ARGS;                              \
		coll(PS_FN_##NAME, site, t, comm, ROOT, BYTES);     \
		return rc;                                          \
	} while (0)

/* mean_block is the mean of the blocks of counts[i] elements of dt, one
 * per process of comm. */
static int64_t mean_block(MPI_Comm comm, const int counts[], MPI_Datatype dt)
{
	int64_t bytes = 0;
	int i, n = comm_size(comm);
	for (i = 0; i < n; i++)
		bytes += ps_bytes(counts[i], dt);
	return bytes / n;
}

int MPI_Barrier(MPI_Comm comm)
{
	COLLECTIVE(Barrier, (comm), -1, 0);
}

int MPI_Bcast(void *b, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	COLLECTIVE(Bcast, (b, count, dt, root, comm), root, ps_bytes(count, dt));
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
	COLLECTIVE(Reduce, (sb, rb, count, dt, op, root, comm), root, ps_bytes(count, dt));
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLLECTIVE(Allreduce, (sb, rb, count, dt, op, comm), -1, ps_bytes(count, dt));
}

int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLLECTIVE(Scan, (sb, rb, count, dt, op, comm), -1, ps_bytes(count, dt));
}

int MPI_Exscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLLECTIVE(Exscan, (sb, rb, count, dt, op, comm), -1, ps_bytes(count, dt));
}

/* Gather: every process's contribution (sendcount; at a root using
 * MPI_IN_PLACE, recvcount). */
int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, int root, MPI_Comm comm)
{
	COLLECTIVE(Gather, (sb, sc, st, rb, rc_, rt, root, comm), root,
		   sb == MPI_IN_PLACE ? ps_bytes(rc_, rt) : ps_bytes(sc, st));
}

int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
		MPI_Datatype rt, int root, MPI_Comm comm)
{
	COLLECTIVE(Gatherv, (sb, sc, st, rb, rcs, displs, rt, root, comm), root,
		   sb == MPI_IN_PLACE ? ps_bytes(rcs[comm_rank(comm)], rt) : ps_bytes(sc, st));
}

/* Scatter: the chunk each process gets (recvcount; at a root using
 * MPI_IN_PLACE, sendcount). */
int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, int root, MPI_Comm comm)
{
	COLLECTIVE(Scatter, (sb, sc, st, rb, rc_, rt, root, comm), root,
		   rb == MPI_IN_PLACE ? ps_bytes(sc, st) : ps_bytes(rc_, rt));
}

int MPI_Scatterv(const void *sb, const int scs[], const int displs[], MPI_Datatype st, void *rb, int rc_,
		 MPI_Datatype rt, int root, MPI_Comm comm)
{
	COLLECTIVE(Scatterv, (sb, scs, displs, st, rb, rc_, rt, root, comm), root,
		   rb == MPI_IN_PLACE ? ps_bytes(scs[comm_rank(comm)], st) : ps_bytes(rc_, rt));
}

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm)
{
	COLLECTIVE(Allgather, (sb, sc, st, rb, rc_, rt, comm), -1,
		   sb == MPI_IN_PLACE ? ps_bytes(rc_, rt) : ps_bytes(sc, st));
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
		   MPI_Datatype rt, MPI_Comm comm)
{
	COLLECTIVE(Allgatherv, (sb, sc, st, rb, rcs, displs, rt, comm), -1,
		   sb == MPI_IN_PLACE ? ps_bytes(rcs[comm_rank(comm)], rt) : ps_bytes(sc, st));
}

/* Alltoall: the block sent to each other process. */
int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, MPI_Comm comm)
{
	COLLECTIVE(Alltoall, (sb, sc, st, rb, rc_, rt, comm), -1,
		   sb == MPI_IN_PLACE ? ps_bytes(rc_, rt) : ps_bytes(sc, st));
}

/* Alltoallv: the mean block sent to a process. */
int MPI_Alltoallv(const void *sb, const int scs[], const int sd[], MPI_Datatype st, void *rb, const int rcs[],
		  const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
	COLLECTIVE(Alltoallv, (sb, scs, sd, st, rb, rcs, rd, rt, comm), -1,
		   sb == MPI_IN_PLACE ? mean_block(comm, rcs, rt) : mean_block(comm, scs, st));
}

/* Reduce_scatter: the mean block a process receives. */
int MPI_Reduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLLECTIVE(Reduce_scatter, (sb, rb, rcs, dt, op, comm), -1, mean_block(comm, rcs, dt));
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int rc_, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLLECTIVE(Reduce_scatter_block, (sb, rb, rc_, dt, op, comm), -1, ps_bytes(rc_, dt));
}

/* ---- communicator creation: registered at creation so that every member
 * numbers its communicators in the same order ---- */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	int rc = PMPI_Comm_dup(comm, out);
	if (rc == MPI_SUCCESS)
		ps_comm_created(*out);
	return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	int rc = PMPI_Comm_split(comm, color, key, out);
	if (rc == MPI_SUCCESS)
		ps_comm_created(*out);
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *out)
{
	int rc = PMPI_Comm_create(comm, g, out);
	if (rc == MPI_SUCCESS)
		ps_comm_created(*out);
	return rc;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *out)
{
	int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, out);
	if (rc == MPI_SUCCESS)
		ps_comm_created(*out);
	return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out)
{
	int rc = PMPI_Cart_sub(comm, remain, out);
	if (rc == MPI_SUCCESS)
		ps_comm_created(*out);
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	if (ps_on)
		ps_comm_freed(*comm);
	return PMPI_Comm_free(comm);
}
