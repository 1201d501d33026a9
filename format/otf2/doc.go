// Package otf2 imports OTF2 archives, the trace format of Score-P, with a
// reader of the binary format written in Go (no cgo, no libotf2).
//
// An archive is an anchor file (traces.otf2), the global definitions
// (traces.def) and, per location, an event file (traces/<id>.evt) with
// optional local definitions (traces/<id>.def: mappings of its local ids
// to global ones, and clock offsets). Every file is a sequence of chunks
// (of the chunk sizes the anchor file gives), each starting with a header
// that says the byte order of the machine that wrote it; integers are
// compressed (a size byte and that many low-order bytes); every record
// carries its length except the ten event records of OTF2 1.1 with a
// single field, so records of types this reader does not know are skipped
// and counted. The reader was written from OTF2's specification and
// checked against otf2-print on real Score-P 7.1 and 9.0 archives.
//
// The import maps:
//   - each location (thread, GPU stream, metric source) to a process,
//     numbered 0..P-1 in ascending location id; ProcInfo names it and
//     keeps its location id and type, location group and system tree path;
//   - region definitions to RegionDefs (same ids; role function/wrapper →
//     function, loop → loop, else user) and Enter/Leave to Enter/Exit,
//     made to nest: a Leave of a region that is not the innermost open
//     one on its location also leaves the regions entered inside it, at
//     its time (RepairOutOfOrderLeave, as APEX and TraceR traces need),
//     and a Leave of a region that is not open is dropped
//     (RepairLeaveWithoutEnter), so that analyses need not repair them
//     again and `parscope info` lists the repairs;
//   - MpiSend/MpiRecv to Send/Recv with bytes, tag and communicator, the
//     peer rank resolved through the communicator's group to a process;
//     MpiIsend + MpiIsendComplete to one Send with its completion time and
//     request id (Seq, low 31 bits); MpiIrecvRequest + MpiIrecv to one Recv
//     posted at the request and completed at MpiIrecv; cancelled requests
//     are dropped and counted in Repairs;
//   - MpiCollectiveBegin/End to Coll (operation, root, bytes sent; bytes
//     received are summed per process in ProcInfo.Extra);
//   - Metric events to Counter samples, one per metric member (CounterDef
//     ids are the metric member ids; a non-zero exponent is put in the unit);
//   - ProgramBegin/End and Parameter events to named events
//     ("program_begin", "program_end", "parameter <name>",
//     "parameter <name>=<string>");
//   - communicators to CommDefs whose members are processes in rank order.
//
// Timestamps are clock-corrected with the locations' ClockOffset records
// exactly as OTF2's reader does, then converted to nanoseconds since the
// ClockProperties global offset, rounded to the nearest nanosecond
// (computed in 128 bits, so exact to within half a nanosecond).
// Meta.ClockResolution is the tick length rounded to whole nanoseconds,
// at least 1; the exact tick rate is in the run's Extra
// ("otf2.ticks_per_second"). Event counts by otf2-print's record names
// are in the run's Extra ("otf2.events.ENTER", ...) and event types not
// converted in "otf2.skipped.<NAME>".
//
// Not read: SION and compressed substrates, snapshots, thumbnails, markers,
// and the event records not listed above (OpenMP, threads, RMA, I/O,
// calling contexts, which are counted as skipped).
package otf2
