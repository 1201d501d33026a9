/*
 * parscope.h: mark code regions (loops, phases) in an MPI program so that
 * parscope's MPI tracing ties communication to them (Jones et al. 2007):
 *
 *   #include "parscope.h"
 *   parscope_region_begin("loop 36");
 *   for (...) { ... MPI_Send(...) ... }
 *   parscope_region_end("loop 36");
 *
 * Regions nest; a region's name is its label in the trace, and a name
 * starting with "loop" or "if" makes a loop or if region (anything else is a
 * user region). The marks are MPI_Pcontrol calls, which MPI defines as a
 * no-op for profiling tools: without parscope's shim preloaded they cost a
 * library call and record nothing, so the program needs no extra library.
 * Call them after MPI_Init and before MPI_Finalize.
 */
#ifndef PARSCOPE_H
#define PARSCOPE_H

#include <mpi.h>

/* MPI_Pcontrol levels the shim interprets (other levels go to the MPI library). */
#define PARSCOPE_PCONTROL_BEGIN 0x50530001
#define PARSCOPE_PCONTROL_END 0x50530002

#define parscope_region_begin(name) ((void)MPI_Pcontrol(PARSCOPE_PCONTROL_BEGIN, (const char *)(name)))
#define parscope_region_end(name) ((void)MPI_Pcontrol(PARSCOPE_PCONTROL_END, (const char *)(name)))

#endif
