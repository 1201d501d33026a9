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
//     (type-50000000)*100000+value, below 10,000,000. An MPI call entered
//     while one of its type is open exits that one first
//     (RepairImplicitExit); an exit with none open is dropped
//     (RepairUnopenedExit).
//   - Function events. Extrae's types whose values name functions, entered
//     at a value other than 0 and left at 0 (FunctionTypes), also become
//     regions named by the .pcf value of the type ("main", "solve
//     (solve.c)"), or "<type name> value <v>" when the .pcf has no name for
//     the value: 60000019 user function (USRFUNC_EV), 60000018 executed
//     OpenMP parallel (outlined) function (OMPFUNC_EV), 60000020 pthread
//     function (PTHREAD_FUNC_EV), 60000023 executed OpenMP task function
//     (TASKFUNC_EV), 60000024 instantiated OpenMP task function
//     (TASKFUNC_INST_EV), 63000006 CUDA kernel execution
//     (CUDA_KERNEL_EXEC_EV) and 63500006 HIP kernel execution
//     (HIP_KERNEL_EXEC_EV). Sources: Extrae's src/common/events.h for the
//     numbers; mpi2prv translates the addresses of exactly these types into
//     function ids with .pcf names (paraver_translate_address_event in
//     src/merger/paraver/paraver_generator.c), and their handlers write the
//     address on entry and EVT_END (0) on exit (USRFunction_Event in
//     misc_prv_semantics.c, OpenMP_Function_Event and Task_Event in
//     omp_prv_semantics.c, pthread_Function_Event and pthread_Call in
//     pthread_prv_semantics.c, CUDA_Kernel_Exec_Event and
//     HIP_Kernel_Exec_Event in cuda_ and hip_prv_semantics.c; Extrae
//     commit 2292a142). Functions of one type nest (main calls solve): a
//     value other than 0 always enters, 0 exits the innermost open function
//     of the type; an exit with none open is dropped
//     (RepairFunctionUnopenedExit). The region id of value v of the k-th
//     of FunctionTypes is k*FunctionRegionScale+v (200000005 is user
//     function 5), from 100,000,001 up, so it cannot meet an MPI id;
//     RegionID and RegionType convert. A value of 100,000,000 or more (an
//     address mpi2prv did not translate) or below 0 stays a trace.Event,
//     and so does its exit. Not regions, but events: the *_LINE types
//     (60000118, 60000119, ...: the source line of the same call), the
//     sampled call stacks 30000000-30000199 ("Sampled functions", their
//     lines) and the MPI callers 70000000-70000099 and their lines
//     80000000-80000099 ("Caller at level N"): these are samples, not
//     entries and exits. Left as events for now: the types of Extrae's
//     newer OpenMP instrumentation (src/common/new_openmp_events.h, numbered
//     from 60000: outlined function 60012, task instantiation 60015 and
//     execution 60018), whose outlined type also receives the addresses of
//     NEW_OMP_ADDRESS_EV, written with no state change, so that entries
//     and exits are not known to pair.
//   - Other events. Types 42000000-42999999 (PAPI and other hardware
//     counters) become trace.Counter samples with the type as counter id.
//     Every other type becomes trace.Event with the type as event id and
//     the value as value. EventDef and CounterDef names come from the .pcf
//     EVENT_TYPE sections; the .pcf VALUES names of a type are kept in
//     Meta.Extra["prv.values.<type>"] as a JSON object {"value":"name"},
//     and the .pcf name of a type that became regions in
//     Meta.Extra["prv.type.<type>"].
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
// events, counters and regions as type 2 records (a region imported
// from an MPI call or function event under its own type and value);
// matched messages
// (trace.Matcher) as type 3 records; collectives as type 4 records. For a
// trace that came from Paraver, importing the export gives the same
// records and dictionaries (tested on every real trace of testdata/real). Other traces
// lose what Paraver cannot hold: communicators and requests of messages,
// unmatched message sides, collective end times, and region kinds and
// parents: their regions are written as user functions (type 60000019,
// value id+1) and come back as user function regions (see Export).
package prv
