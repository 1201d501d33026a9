/*
 * cg.c: a CG-like communication pattern in MPI (NAS CG's, Jones et al. 2007, section
 * 6), for any number of ranks (8, 16 and 27 are the tested ones).
 *
 * The ranks form a 2D grid of nprows x npcols (npcols the smallest divisor
 * of the rank count not below its square root: 2x4 for 8, 4x4 for 16, 3x9
 * for 27). Each rank holds a dense block of the matrix and a segment of the
 * vectors. A conjugate-gradient iteration ("loop cg"):
 *
 *   - multiplies its block by its segment of p, then sums the partial
 *     products across its row ("loop reduce": recursive doubling with the
 *     partner whose column differs in bit i when npcols is a power of two,
 *     otherwise npcols-1 steps around the row), as NAS CG's reduce_exch;
 *   - swaps the result with its transpose partner ("block transpose",
 *     NAS's exch_proc; an MPI_Sendrecv);
 *   - computes two dot products with MPI_Allreduce ("block dot").
 *
 *   mpicc -O2 -g -I collect/mpi/include -o cg examples/mpi/cg.c -lm
 *   parscope mpirun -o cg.pst -- mpirun.mpich -np 16 ./cg [-n 64] [-iter 10]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parscope.h"

static int me, np, nprows, npcols, row, col, seg = 64, nit = 10;
static double *a, *p, *q, *w, *tmp;

static int pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

/* reduce sums w across the row into w. */
static void reduce(void)
{
	int i, step;
	parscope_region_begin("loop reduce");
	if (pow2(npcols)) {
		for (step = 1; step < npcols; step <<= 1) {
			int partner = row * npcols + (col ^ step);
			MPI_Sendrecv(w, seg, MPI_DOUBLE, partner, 1, tmp, seg, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
			for (i = 0; i < seg; i++)
				w[i] += tmp[i];
		}
	} else {
		/* around the row: pass the running partial sum npcols-1 times */
		double *acc = malloc(sizeof(double) * (size_t)seg);
		memcpy(acc, w, sizeof(double) * (size_t)seg);
		for (step = 1; step < npcols; step++) {
			int right = row * npcols + (col + 1) % npcols, left = row * npcols + (col + npcols - 1) % npcols;
			MPI_Sendrecv(acc, seg, MPI_DOUBLE, right, 2, tmp, seg, MPI_DOUBLE, left, 2, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
			memcpy(acc, tmp, sizeof(double) * (size_t)seg);
			for (i = 0; i < seg; i++)
				w[i] += acc[i];
		}
		free(acc);
	}
	parscope_region_end("loop reduce");
}

/* transpose partner: the rank at (col, row) of the transposed numbering. */
static int tpartner(int r)
{
	int rr = r / npcols, cc = r % npcols, k = cc * nprows + rr;
	return k;
}

static int tsource(int r)
{
	/* the inverse of tpartner: k = cc*nprows + rr  ->  r = rr*npcols + cc */
	int cc = r / nprows, rr = r % nprows;
	return rr * npcols + cc;
}

static double dot(const double *x, const double *y)
{
	double s = 0, all = 0;
	int i;
	for (i = 0; i < seg; i++)
		s += x[i] * y[i];
	MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return all;
}

int main(int argc, char **argv)
{
	int i, j, it, k;
	double rho = 0, alpha, pq;
	MPI_Init(&argc, &argv);
	for (k = 1; k + 1 < argc; k += 2) {
		if (!strcmp(argv[k], "-n"))
			seg = atoi(argv[k + 1]);
		else if (!strcmp(argv[k], "-iter"))
			nit = atoi(argv[k + 1]);
	}
	if (seg < 1 || nit < 1) {
		fprintf(stderr, "cg: want -n >= 1 and -iter >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (npcols = 1; npcols * npcols < np || np % npcols; npcols++)
		;
	nprows = np / npcols;
	row = me / npcols;
	col = me % npcols;
	a = malloc(sizeof(double) * (size_t)seg * seg);
	p = malloc(sizeof(double) * (size_t)seg);
	q = malloc(sizeof(double) * (size_t)seg);
	w = malloc(sizeof(double) * (size_t)seg);
	tmp = malloc(sizeof(double) * (size_t)seg);
	for (i = 0; i < seg; i++) {
		for (j = 0; j < seg; j++)
			a[i * seg + j] = (i == j ? 4.0 : 0) + ((i * 31 + j * 17 + me * 7) % 11) / 110.0;
		p[i] = 1.0;
	}
	parscope_region_begin("loop cg");
	for (it = 0; it < nit; it++) {
		for (i = 0; i < seg; i++) {
			double s = 0;
			for (j = 0; j < seg; j++)
				s += a[i * seg + j] * p[j];
			w[i] = s;
		}
		reduce();
		parscope_region_begin("block transpose");
		MPI_Sendrecv(w, seg, MPI_DOUBLE, tpartner(me), 3, q, seg, MPI_DOUBLE, tsource(me), 3, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		parscope_region_end("block transpose");
		parscope_region_begin("block dot");
		pq = dot(p, q);
		rho = dot(p, p);
		parscope_region_end("block dot");
		alpha = pq != 0 ? rho / pq : 0;
		for (i = 0; i < seg; i++)
			p[i] = p[i] - alpha * q[i] / (1 + it);
	}
	parscope_region_end("loop cg");
	if (me == 0)
		printf("cg: %d ranks as %dx%d, segment %d, %d iterations, rho %.6e\n", np, nprows, npcols, seg, nit, rho);
	MPI_Finalize();
	return 0;
}
