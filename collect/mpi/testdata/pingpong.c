/* pingpong.c: the shim's cost benchmark (collect/mpi BenchmarkShim).
 *   pingpong pingpong N   ranks 0 and 1 bounce an 8-byte message N times
 *   pingpong self N       one rank: N MPI_Sendrecv of 8 bytes to itself
 *   pingpong barrier N    one rank: N MPI_Barrier (almost free in MPI, so
 *                         the shim's cost stands out)
 * Rank 0 prints "calls C wall W cpu P": the MPI calls rank 0 made in the
 * timed loop, the loop's wall-clock seconds (MPI_Wtime) and rank 0's CPU
 * seconds (CLOCK_PROCESS_CPUTIME_ID), which waiting for a core under load
 * does not inflate. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int rank, i, n, calls;
	double v = 0, w = 0, t0, t1, c0, c1;
	const char *mode;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: pingpong pingpong|self|barrier N\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	mode = argv[1];
	n = atoi(argv[2]);
	calls = n;
	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	c0 = cpu();
	if (!strcmp(mode, "pingpong")) {
		calls = 2 * n;
		for (i = 0; i < n; i++) {
			if (rank == 0) {
				MPI_Send(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(&v, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(&v, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
			}
		}
	} else if (!strcmp(mode, "self")) {
		for (i = 0; i < n; i++)
			MPI_Sendrecv(&v, 1, MPI_DOUBLE, rank, 0, &w, 1, MPI_DOUBLE, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		for (i = 0; i < n; i++)
			MPI_Barrier(MPI_COMM_SELF);
	}
	c1 = cpu();
	PMPI_Barrier(MPI_COMM_WORLD);
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("calls %d wall %.9f cpu %.9f\n", calls, t1 - t0, c1 - c0);
	MPI_Finalize();
	return 0;
}
