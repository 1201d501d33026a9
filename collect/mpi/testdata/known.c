/* known.c: a 4-rank MPI program whose communication matrices are known
 * exactly (collect/mpi's TestKnownMatrices lists every message). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "parscope.h"

static char buf[4096], rbuf[4096];

int main(int argc, char **argv)
{
	int rank, size, i;
	MPI_Comm half;
	MPI_Request rq[2];
	MPI_Status st;
	double x[2] = {1, 2}, y[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "known: run with 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	memset(buf, rank, sizeof buf);

	/* A ring, three times: rank i sends 100*(i+1) bytes to i+1 (tag 1).
	 * Rank 2 receives with MPI_ANY_SOURCE. */
	parscope_region_begin("loop ring");
	for (i = 0; i < 3; i++) {
		int next = (rank + 1) % 4, prev = (rank + 3) % 4, src = rank == 2 ? MPI_ANY_SOURCE : prev;
		if (rank % 2 == 0) {
			MPI_Send(buf, 100 * (rank + 1), MPI_BYTE, next, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, sizeof rbuf, MPI_BYTE, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, sizeof rbuf, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st);
			MPI_Send(buf, 100 * (rank + 1), MPI_BYTE, next, 1, MPI_COMM_WORLD);
		}
	}
	parscope_region_end("loop ring");

	/* Non-blocking: 0 -> 2 64 bytes (tag 5, received from MPI_ANY_SOURCE
	 * with MPI_ANY_TAG: nothing else is sent to 2 here), 1 -> 3 32 bytes
	 * (tag 6), 0 -> 3 16 bytes (tag 7, MPI_ANY_SOURCE, completed by
	 * MPI_Waitall with MPI_STATUSES_IGNORE), then 1 <-> 3 48 bytes each way
	 * with MPI_Sendrecv (tag 9). */
	parscope_region_begin("phase nb");
	if (rank == 0) {
		MPI_Isend(buf, 64, MPI_BYTE, 2, 5, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(buf, 2, MPI_DOUBLE, 3, 7, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		MPI_Isend(buf, 32, MPI_BYTE, 3, 6, MPI_COMM_WORLD, &rq[0]);
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		MPI_Sendrecv(buf, 48, MPI_BYTE, 3, 9, rbuf, 48, MPI_BYTE, 3, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (rank == 2) {
		MPI_Irecv(rbuf, sizeof rbuf, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
		MPI_Wait(&rq[0], &st);
	} else {
		MPI_Irecv(rbuf, 32, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(rbuf + 64, 1024, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		MPI_Sendrecv(buf, 48, MPI_BYTE, 1, 9, rbuf, 48, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	parscope_region_end("phase nb");

	/* Collectives: a Bcast of 80 bytes from rank 1, an Allreduce of two
	 * doubles within {0,2} and within {1,3}, a Barrier. */
	parscope_region_begin("phase coll");
	MPI_Bcast(buf, 80, MPI_BYTE, 1, MPI_COMM_WORLD);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Allreduce(x, y, 2, MPI_DOUBLE, MPI_SUM, half);
	MPI_Comm_free(&half);
	MPI_Barrier(MPI_COMM_WORLD);
	parscope_region_end("phase coll");

	MPI_Finalize();
	return 0;
}
