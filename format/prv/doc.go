// Package prv imports and exports Paraver traces: the text .prv file written
// by Extrae (and by BSC's older MPItrace), with its .pcf (names of states,
// event types and values) and .row (names of CPUs, nodes and threads) files
// next to it under the same base name.
//
// # Import
//
// The importer registers itself as "prv" and recognises a file that starts
// with "#Paraver". It maps the trace onto the model as follows.
//
//   - Header. "#Paraver (date):ftime[_ns]:nodes:nAppl:appl[:appl...][,nComms]".
//     The time unit is nanoseconds when ftime has the "_ns" suffix, otherwise
//     the .pcf's DEFAULT_OPTIONS UNITS (NANOSEC, MICROSEC, MILLISEC, SEC), and
//     microseconds when there is no .pcf (said in Meta.Extra["prv.time_unit"]);
//     format.Options.TimeUnit overrides all three. Meta.ClockResolution is the
//     unit in ns and every time is converted to ns.
//   - Processes. Each Paraver thread (appl, task, thread), in header order
//     (application, then task, then thread), becomes one process of run 0
//     with a dense id. Its ProcInfo name is the .row THREAD name when the .row
//     names every thread, else "appl.task.thread"; Extra holds "appl",
//     "task", "thread" and "node" (1-based, as in the file).
//   - States (type 1, cpu:appl:task:thread:begin:end:state). A state record
//     becomes trace.State at begin. The model has no state end: a state lasts
//     until the next state of the process. When a state's end is earlier than
//     the next state's begin (a gap, which Paraver shows as no state), the
//     importer enters state 0 (Paraver's "Idle") at that end; after the last
//     state it does so when the end is before the trace's end. Such gaps are
//     counted under Header.Repairs[RepairStateGap].
//   - Events (type 2, several type:value pairs per record). Types
//     50000001-50000099 (Extrae's MPI call events) become regions: a value
//     other than 0 enters the region named by the .pcf value ("MPI_Recv"),
//     0 exits the region of that type that is open; the region id is
//     (type-50000000)*100000+value. Types 42000000-42999999 (PAPI and other
//     hardware counters) become trace.Counter samples with the type as
//     counter id. Every other type becomes trace.Event with the type as event
//     id and the value as value. EventDef and CounterDef names come from the
//     .pcf EVENT_TYPE sections; the .pcf VALUES names of a type are kept in
//     Meta.Extra["prv.values.<type>"] as a JSON object {"value":"name"}.
//   - Communications (type 3). One trace.Send on the sender at the logical
//     send time with End the physical send time, and one trace.Recv on the
//     receiver at the logical receive time with End the physical receive
//     time, both with the size, the tag and communicator 0 (Paraver records
//     carry no communicator). Extrae sorts communication records by the
//     physical send time, so both sides are put into their process's stream
//     at their logical times: the importer holds back up to a window of
//     records (parameter "window", DefaultWindow) and releases the older
//     half of each process's records when it is full; a message side whose
//     time lies before records already released is moved to the last
//     released time and counted (RepairMessageMoved). Within the window the
//     result is exact.
//   - Communicators ("c:appl:id:n:task..."). A CommDef whose members are the
//     processes of thread 1 of each task; members naming a task that the
//     header does not declare are dropped and counted (RepairCommMember).
//   - Global operations (the old "4:cpu:appl:task:thread:time:comm:send:recv:op:root"
//     records). A trace.Coll at time with the operation from Dimemas's
//     global-operation numbering (0 barrier, 1 bcast, 2/3 gather(v), 4/5
//     scatter(v), 6/7 allgather(v), 8/9 alltoall(v), 10 reduce, 11 allreduce,
//     12 reduce_scatter, 13 scan), the send size as bytes, the communicator,
//     and for rooted operations the process at rank root of the communicator.
//   - Comment lines ("#..." after the header) are skipped and counted in
//     Meta.Extra["prv.comment_lines"].
//
// A missing .pcf or .row is not an error: names are then numeric and
// Meta.Extra["prv.pcf"] or ["prv.row"] says "missing". Records of a process
// must be in time order (Paraver files are sorted by time); a record that
// goes back in time on its process is a located error, as is any malformed
// line.
//
// # Export
//
// Export writes OUT.prv, OUT.pcf and OUT.row (see Paths) that Paraver opens:
// times in ns; the application/task/thread/node layout the importer kept in
// ProcInfo (else one single-thread task per process); states from each
// state entry to the process's next one (the last to the trace's end);
// events, counters and regions as type 2 records; matched messages
// (trace.Matcher) as type 3 records; collectives as type 4 records. For a
// trace that came from Paraver, importing the export gives the same
// records and dictionaries (tested on every real trace of testdata/real). Other traces
// lose what Paraver cannot hold: communicators and requests of messages,
// unmatched message sides, collective end times, and their regions come
// back as user function events (see Export).
package prv
