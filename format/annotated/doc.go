// Package annotated imports the code-structure-annotated MPI traces of
// Jones et al. 2007 ("Linking Compilation and Visualization for Massively Parallel Programs", section
// 3.1, Figure 4): the output of a program whose compiler inserted prints at
// the entry and exit of loops and conditionals and around every MPI call.
//
// # Format
//
// There is one file per process. A file is a sequence of records separated
// by white space; a record may be wrapped over several lines anywhere white
// space may appear, so the importer parses records, not lines:
//
//	--- LOOP_151 starts --- [#1070@comm3_@"mg.f"]
//	[D]mpi_irecv_(count=8712 datatype=27 src=-2
//	tag=1100 Communicator=91 request=133)
//	[#1167:ready.: "mg.f"] [ 1793.078235000
//	1793.078257000 ] { typesize = 8 }
//	+++ LOOP_151 ends +++ [#1083@comm3_@"mg.f"]
//
// A region line "--- LABEL starts --- [#line@function@"file"]" becomes a
// trace.Enter record and "+++ LABEL ends +++ [...]" a trace.Exit (the
// location is optional on an end line). The region's kind comes from the
// label's prefix: LOOP_ (also DO_, FOR_, WHILE_) is a loop, IF_ an if,
// FUNC_ (FUNCTION_, SUBROUTINE_) a function, CALL_ a call site, anything
// else a user region. Regions get dense ids in order of first appearance,
// keyed by label, function and file; the RegionDef keeps the line of the
// first start, the line of the first located end (EndLine), and as Parent
// the region that was innermost when it was first entered (or -1).
//
// An end line must close the innermost open region (same label; same
// function and file when it has a location). When it names a region open
// further out, the regions inside it are closed first, at the same time,
// and each is counted as the repair RepairImplicitExit: Figure 4 elides
// the end of IF_152 and closes LOOP_151 around it. An end line that matches
// no open region is an error. Regions still open at the end of a file are
// closed at the file's last known time (RepairUnclosedRegion). A line of
// colons (":", Figure 4's elision mark) is skipped and counted as
// RepairElision. A line starting with "#" is a comment, except the rank
// header described below.
//
// An MPI call record is an optional "[D]" (the compiler could not determine
// the call statically: trace.FlagDynamic on every record it yields), the
// call name as the Fortran binding prints it ("mpi_irecv_"), its arguments
// "(key=value ...)" (keys in any case; values end at white space; request
// lists may be comma-separated), a location ("[#1167:ready.: "mg.f"]" or
// "[#1224@give3.: "mg.f"]"; either separator), the timestamps
// "[ t_end_prev t_start ]" and an optional "{ typesize = N }". The
// timestamps are absolute seconds with up to 9 decimals (further digits
// must be zeros), converted exactly to integer nanoseconds; Options.TimeUnit
// overrides the unit. As the paper puts it, "the first entry is the ending
// time of the last MPI call, the second is the starting time of the current
// MPI call."
//
// # Records
//
// A call's T is its t_start. Its End, the time it returned, is the
// t_end_prev of the next call record of the same process; the last call of
// a file has End 0 (unknown). Byte counts are count × typesize, and a call
// that needs one without a "{ typesize = N }" is an error.
//
//   - mpi_send_, mpi_ssend_, mpi_bsend_, mpi_rsend_ and their non-blocking
//     forms (mpi_isend_, mpi_issend_, ...) become trace.Send with Peer=dst,
//     Tag=tag, Comm=Communicator (0 when absent) and Seq=request for
//     non-blocking calls (-1 otherwise).
//   - mpi_recv_ and mpi_irecv_ become trace.Recv with Peer=src. A src equal
//     to the "anysource" parameter (default -2, MPICH's MPI_ANY_SOURCE) gives
//     Peer=trace.NoPeer and trace.FlagAnySource.
//   - mpi_sendrecv_ and mpi_sendrecv_replace_ become a Send (dst/dest,
//     sendcount or count, sendtag or tag) followed by a Recv (src/source,
//     recvcount or count, recvtag or tag), both at the call's time.
//   - A peer equal to the "procnull" parameter (default -1, MPICH's
//     MPI_PROC_NULL) means no message at all: that side is left out, and a
//     call with no message left is kept as a named event instead.
//   - Collectives (every name trace.ParseCollectiveOp knows: barrier, bcast,
//     reduce, allreduce, gather, scatter, allgather, alltoall, their v
//     forms, ...) become trace.Coll with root (or -1; negative roots such as
//     MPI_ROOT count as -1), bytes = count (or sendcount) × typesize (0
//     without a count) and comm.
//   - Every other call (mpi_init_, mpi_comm_rank_, waits, unknown names) is
//     kept as a trace.Event whose EventDef name is the call name as printed;
//     its value is 0, except for waits and tests: the number of requests
//     they completed.
//
// Peers and roots must be ranks. When a file declares the number of
// processes, a rank outside [0, N) is an error naming the record; otherwise
// the run grows to cover every peer. Communicators seen are listed in
// Header.Comms with Unknown set: the trace names communicators by handle
// and never says who belongs to them.
//
// # Waits
//
// A non-blocking send or receive with a request= argument is held back
// until a later mpi_wait_ or mpi_waitall_ of the same process names its
// request (request=, requests= or array_of_requests=, one handle or a
// comma-separated list): its End becomes the time that wait returned (the
// t_end_prev of the call after the wait, or the wait's own start when the
// wait is the file's last call). mpi_test_ and mpi_testall_ complete their
// requests the same way only when they carry a true flag= argument, since
// the tracer prints the arguments passed in, not the results. mpi_waitany_,
// mpi_waitsome_, mpi_testany_ and mpi_testsome_ do not say which request
// completed and complete nothing. When the completing call is never seen —
// the file ends, the request handle is reused by a later call, or more than
// 65536 records pile up behind it — End stays the time the non-blocking call
// itself returned, and the call is counted as RepairUnwaitedRequest. A wait
// naming an unknown request is just an event.
//
// # Region times
//
// Region lines carry no timestamps. A region record between two calls gets
// the time the earlier call returned, that is the t_end_prev of the next
// call record: the code structure was entered or left after the last MPI
// call returned and before the next one started, and the earliest such time
// is the one known. Region records before a file's first call get that
// call's t_end_prev (its t_start when t_end_prev is 0, which a first call
// may print for "no previous call"); region records after the last call get
// that call's t_start, the last known time. Records keep their stream order,
// so each process's records are in time order. Time going backwards within
// a file (a call that ends before it starts, or a t_end_prev before the
// previous t_start) is an error.
//
// # Ranks and time origin
//
// A file's rank comes from a rank header "# rank R of N" (or "# rank R"),
// which must come before the first record; otherwise from the last integer
// in the file's base name ("mg.3.trace", "trace-0003.txt.gz"), and failing
// both the import fails. Two files with the same rank are an error. The run
// has N processes when a header declares N (all headers must agree), or
// max rank + 1, grown to cover every peer. Timestamps are rebased so that
// the smallest one across all files (each file's first, found in a cheap
// first pass) is time 0; that origin, in absolute nanoseconds, is stored in
// Meta.Extra["time_origin_ns"].
//
// # Errors
//
// Every malformed record is a *format.Error naming the file and the line
// where the record starts, and saying what was expected, such as
//
//	mg.3.trace:4: expected "[ t_end_prev t_start ]" after the call location, found "{ typesize = 8 }"
//
// A file that ends inside a record is an error at the record's first line.
package annotated
