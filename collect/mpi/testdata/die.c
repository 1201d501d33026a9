/* die.c: rank 3 of 4 sends 20 messages of 8 bytes to rank 0 (tag 1), then
 * kills itself with SIGKILL before MPI_Finalize; the others wait in a
 * barrier that never completes until the launcher kills them. */
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, i;
	double v = 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 3) {
		for (i = 0; i < 20; i++)
			MPI_Send(&v, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
		kill(getpid(), SIGKILL);
	}
	if (rank == 0)
		for (i = 0; i < 20; i++)
			MPI_Recv(&v, 1, MPI_DOUBLE, 3, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
