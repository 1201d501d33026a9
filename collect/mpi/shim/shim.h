/*
 * shim.h: the PMPI shim's on-disk format and its internal interface.
 *
 * Every rank writes one file, DIR/rank-<world rank>.psmpi, DIR being the
 * value of PARSCOPE_MPI_DIR (without it the shim records nothing). All
 * integers are little-endian. The Go reader (collect/mpi, read.go) is the
 * other half of this definition; change both together and bump
 * PS_VERSION.
 *
 * File header (PS_HEADER_SIZE = 48 bytes):
 *   0  char[8] magic "PSMPI\0\r\n"
 *   8  u16     version (PS_VERSION)
 *  10  u16     header size (48)
 *  12  i32     world rank
 *  16  i32     world size
 *  20  i32     pid
 *  24  i64     CLOCK_REALTIME at MPI_Init, ns since the epoch
 *  32  i64     CLOCK_MONOTONIC at MPI_Init, ns (all record times are
 *              CLOCK_MONOTONIC ns; the reader aligns ranks with the pair)
 *  40  u32     flags (0)
 *  44  u32     reserved (0)
 *
 * Records follow, each starting with a u32 word: the low 8 bits are the
 * record type, the high 24 bits the record's total size in bytes, this word
 * included. A reader skips types it does not know. A file cut anywhere (a
 * rank killed mid-run) is valid up to its last complete record.
 *
 *   PS_REC_STRING  u32 id, bytes: the name of string id (a user region)
 *   PS_REC_INFO    bytes "key\0value": metadata (mpi, host, exe)
 *   PS_REC_MAP     u64 start, u64 end, u64 file offset, bytes path: an
 *                  executable mapping of /proc/self/maps at MPI_Init, to
 *                  resolve call sites
 *   PS_REC_COMM    u32 id, u32 flags, u32 n, i32 world rank[n]: a
 *                  communicator (local id; 0 is MPI_COMM_WORLD) and its
 *                  members in communicator-rank order. flags bit 0: seen
 *                  first at a use, not at its creation.
 *   PS_REC_FREE    u32 id: the communicator was freed
 *   event records (PS_EVENT_SIZE = 64 bytes after the word):
 *                  i64 t, i64 end, u64 call site (return address), u64
 *                  request, u32 comm, i32 peer, i32 tag, u32 function,
 *                  i64 bytes, i32 status source, i32 status tag
 *     PS_REC_SEND      blocking send: peer = destination (communicator rank)
 *     PS_REC_RECV      blocking receive: peer/tag as posted, bytes and
 *                      status as received
 *     PS_REC_ISEND     non-blocking send posted at t; end is when the call
 *                      returned (the message completes at PS_REC_COMPLETE)
 *     PS_REC_IRECV     non-blocking receive, the same (bytes: posted size)
 *     PS_REC_COMPLETE  request completed at t by function (a Wait or Test;
 *                      MPI_Request_free releases it uncompleted); bytes
 *                      and status from the completing status. Request
 *                      handles are not unique (MPICH gives every send that
 *                      completed at once the same one): a completion
 *                      completes the oldest pending request of its handle.
 *     PS_REC_COLL      collective: peer = root (communicator rank) or -1,
 *                      bytes = the per-process payload
 *     PS_REC_BEGIN     user region begins: tag = string id
 *     PS_REC_END       user region ends: tag = string id
 *     PS_REC_CALL      a Wait/Test call that completed nothing, or any
 *                      completing call (t..end, for its call site)
 *   PS_REC_FINAL   i64 t, u64 records written before it: MPI_Finalize
 *
 * Peers: PS_ANY (-1) is MPI_ANY_SOURCE or MPI_ANY_TAG, PS_NULL (-2)
 * MPI_PROC_NULL, whatever the MPI library's own values are.
 */
#ifndef PARSCOPE_SHIM_H
#define PARSCOPE_SHIM_H

#include <stdint.h>
#include <mpi.h>

#define PS_MAGIC "PSMPI\0\r\n"
#define PS_VERSION 1
#define PS_HEADER_SIZE 48
#define PS_EVENT_SIZE 64

enum {
	PS_REC_STRING = 1,
	PS_REC_INFO = 2,
	PS_REC_MAP = 3,
	PS_REC_COMM = 4,
	PS_REC_FREE = 5,
	PS_REC_SEND = 16,
	PS_REC_RECV = 17,
	PS_REC_ISEND = 18,
	PS_REC_IRECV = 19,
	PS_REC_COMPLETE = 20,
	PS_REC_COLL = 21,
	PS_REC_BEGIN = 22,
	PS_REC_END = 23,
	PS_REC_CALL = 24,
	PS_REC_FINAL = 32
};

#define PS_ANY (-1)
#define PS_NULL (-2)

/* The MPI functions the shim records, numbered as stored in events. The Go
 * reader parses this list (keep one X(number, Name) per line). */
#define PS_FUNCS(X) \
	X(1, Send) \
	X(2, Bsend) \
	X(3, Ssend) \
	X(4, Rsend) \
	X(5, Recv) \
	X(6, Isend) \
	X(7, Ibsend) \
	X(8, Issend) \
	X(9, Irsend) \
	X(10, Irecv) \
	X(11, Sendrecv) \
	X(12, Sendrecv_replace) \
	X(13, Wait) \
	X(14, Waitall) \
	X(15, Waitany) \
	X(16, Waitsome) \
	X(17, Test) \
	X(18, Testall) \
	X(19, Testany) \
	X(20, Testsome) \
	X(21, Barrier) \
	X(22, Bcast) \
	X(23, Reduce) \
	X(24, Allreduce) \
	X(25, Gather) \
	X(26, Gatherv) \
	X(27, Scatter) \
	X(28, Scatterv) \
	X(29, Allgather) \
	X(30, Allgatherv) \
	X(31, Alltoall) \
	X(32, Alltoallv) \
	X(33, Reduce_scatter) \
	X(34, Reduce_scatter_block) \
	X(35, Scan) \
	X(36, Exscan) \
	X(37, Pcontrol) \
	X(38, Request_free)

#define PS_FN_ENUM(n, name) PS_FN_##name = n,
enum { PS_FUNCS(PS_FN_ENUM) PS_FN_LAST };
#undef PS_FN_ENUM

/* One event record's fields. */
typedef struct {
	int64_t t, end;
	uint64_t site, req;
	uint32_t comm;
	int32_t peer, tag;
	uint32_t fn;
	int64_t bytes;
	int32_t src, stag;
} ps_event;

/* ps_on is non-zero between MPI_Init and MPI_Finalize when recording. */
extern int ps_on;

int64_t ps_now(void);
void ps_start(void);
void ps_finish(void);
void ps_event_write(int type, const ps_event *e);
uint32_t ps_comm(MPI_Comm c);
void ps_comm_created(MPI_Comm c);
void ps_comm_freed(MPI_Comm c);
uint32_t ps_string(const char *s);
int64_t ps_bytes(int count, MPI_Datatype t);
int32_t ps_peer(int p);
int32_t ps_tag(int t);
uint64_t ps_req(MPI_Request r);

#endif
