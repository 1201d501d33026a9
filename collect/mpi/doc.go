// Package mpi records MPI programs (traces of real message passing, as
// Jones et al. 2007 recorded them): a PMPI shim in C, preloaded into every rank with LD_PRELOAD,
// writes one binary file per rank, and Merge turns the files of a run into
// trace records (a .pst through the store).
//
// # The shim
//
// The shim's C source is embedded (Sources) and built with the MPI
// library's own mpicc by Build, which caches the shared library by the
// hash of the source and of the compiler's identity. With PARSCOPE_MPI_DIR
// set, each rank records from MPI_Init to MPI_Finalize:
//
//   - point-to-point calls: MPI_Send, Bsend, Ssend, Rsend, Recv, Sendrecv,
//     Sendrecv_replace (from call to return), and MPI_Isend, Ibsend, Issend,
//     Irsend, Irecv, posted at the call and completed by the MPI_Wait,
//     Waitall, Waitany, Waitsome, Test, Testall, Testany or Testsome that
//     completes their request (MPI_Request_free releases one uncompleted);
//     received sizes and MPI_ANY_SOURCE / MPI_ANY_TAG come from the
//     completing status;
//   - collectives: Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v),
//     Allgather(v), Alltoall(v), Reduce_scatter(_block), Scan, Exscan with
//     their root, communicator and per-process payload;
//   - communicators: MPI_COMM_WORLD and those made by Comm_dup, Comm_split,
//     Comm_create, Cart_create and Cart_sub, with their members as world
//     ranks (others are defined at their first use);
//   - the call site of every call (its return address) and the executable
//     mappings of /proc/self/maps, which Merge resolves to function, file and
//     line with debug/dwarf;
//   - user regions marked with include/parscope.h
//     (parscope_region_begin("loop 36") ... parscope_region_end("loop 36")),
//     which are MPI_Pcontrol calls and so cost nothing without the shim.
//
// Records go to a per-rank buffer (PARSCOPE_MPI_BUFFER bytes, 1 MiB by
// default) that is written to DIR/rank-N.psmpi when full, at MPI_Finalize,
// at exit, and on a fatal signal (SIGTERM, SIGINT, SIGSEGV, SIGABRT, ...,
// when the program has no handler of its own). A rank killed with SIGKILL
// loses at most its last buffer, and a call is recorded when it returns,
// so one in progress when the rank dies is lost too; the file, cut
// anywhere, still reads up to its last complete record and merges (the
// other side of a lost message is then reported unmatched). The file
// format is documented in shim/shim.h; ReadRank reads it.
//
// Tested with MPICH 4.0.2 and Open MPI 4.1.4 (Debian 12's packages); the
// shim must be built with the mpicc of the library the program runs with
// (DetectImpl guesses it from the launcher).
//
// Limits: one thread calls MPI at a time; Fortran bindings, persistent
// requests (MPI_Send_init/Start), MPI_Probe, one-sided and non-blocking
// collectives, and intercommunicators are not recorded.
//
// # Merging
//
// Merge reads the rank files of a run, aligns their clocks (each file
// carries CLOCK_REALTIME and CLOCK_MONOTONIC read together at MPI_Init),
// translates communicator ranks into world ranks, gives communicators global
// ids (members plus creation order), resolves MPI_ANY_SOURCE receives from
// their status, and writes run 0 with one process per rank: send, receive
// and collective records, user regions as enter/exit records, and
// optionally (Options.CallSites) every MPI call as a region of kind "call"
// labelled with its function and source line. Unmatched sends and receives,
// peers and roots outside their communicator, uncompleted requests and
// partial files are counted in the Report, never dropped silently.
package mpi
