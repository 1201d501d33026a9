/*
 * mg.c: an MG-like multigrid halo exchange in MPI (Jones et al. 2007, section 5, the
 * comm3/give3 code of Figure 3), for any number of ranks (8, 16 and 27 are
 * the tested ones).
 *
 * The ranks form a periodic 3D Cartesian grid (MPI_Dims_create). Every rank
 * holds an n^3 block of each of L grid levels (n halves per level). A
 * V-cycle iteration ("loop 36", NAS MG's main loop) restricts down the
 * levels, smooths at the bottom, interpolates back up, and computes a norm:
 *
 *   - at the fine levels, comm3 exchanges the six faces of the block with
 *     the face neighbours, along the 3 axes in both directions ("loop 151",
 *     comm3's axis loop; give3 sends one face, take3 receives one);
 *   - the coarse levels are too small to split over every rank: entering
 *     them, each rank sends its block to the rank with its coordinates
 *     rounded down to even ("block agglomerate"), which then exchange among
 *     themselves on the grid of active ranks ("loop 159", the same comm3
 *     on fewer, farther neighbours; inactive ranks have none); going up,
 *     the active ranks send the blocks back ("block distribute");
 *   - "block norm" is an MPI_Allreduce of the residual's sum of squares.
 *
 * Build and run (regions marked with parscope.h):
 *
 *   mpicc -O2 -g -I collect/mpi/include -o mg examples/mpi/mg.c -lm
 *   parscope mpirun -o mg.pst -- mpirun.mpich -np 16 ./mg [-n 16] [-levels 4] [-iter 4]
 *
 * It prints the process grid and the final norm (the same for every run of
 * the same size and parameters).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parscope.h"

#define MAXL 8

static MPI_Comm cart;
static int me, np, dims[3], coords[3];
static int nlev = 4, nfine, n0 = 16, nit = 4;
static double *u[MAXL];  /* level k: (m+2)^3 with ghost layers */
static int size_[MAXL];  /* m of level k */
static double *sbuf, *rbuf[2];

#define IDX(m, i, j, k) (((size_t)(i) * ((m) + 2) + (j)) * ((m) + 2) + (k))

/* active reports whether the rank holds coarse levels. */
static int active(void) { return coords[0] % 2 == 0 && coords[1] % 2 == 0 && coords[2] % 2 == 0; }

static int rank_of(const int c[3])
{
	int r;
	MPI_Cart_rank(cart, c, &r);
	return r;
}

/* nbr returns the neighbour of this rank along axis in direction dir at a
 * fine level (stride 1) or on the grid of active ranks (stride 2). */
static int nbr(int axis, int dir, int coarse)
{
	int c[3] = {coords[0], coords[1], coords[2]};
	if (!coarse) {
		c[axis] = (c[axis] + dir + dims[axis]) % dims[axis];
		return rank_of(c);
	}
	{
		int q = (dims[axis] + 1) / 2, i = c[axis] / 2;
		i = (i + dir + q) % q;
		c[axis] = 2 * i;
		return rank_of(c);
	}
}

/* face copies the face of u at plane p along axis into (or out of) buf. */
static int face(double *v, int m, int axis, int p, double *buf, int in)
{
	int a, b, len = 0;
	for (a = 1; a <= m; a++)
		for (b = 1; b <= m; b++) {
			size_t x = axis == 0 ? IDX(m, p, a, b) : axis == 1 ? IDX(m, a, p, b) : IDX(m, a, b, p);
			if (in)
				v[x] = buf[len];
			else
				buf[len] = v[x];
			len++;
		}
	return len;
}

/* give3 sends the face of level k in direction dir along axis (Figure 3). */
static void give3(int axis, int dir, int k, int coarse)
{
	int m = size_[k];
	int len = face(u[k], m, axis, dir < 0 ? 1 : m, sbuf, 0);
	MPI_Send(sbuf, len, MPI_DOUBLE, nbr(axis, dir, coarse), 100 + 10 * axis + (dir > 0), cart);
}

/* comm3 exchanges the ghost faces of level k along the 3 axes. */
static void comm3(int k, int coarse)
{
	int axis, m = size_[k];
	const char *region = coarse ? "loop 159" : "loop 151";
	if (coarse && !active())
		return;
	parscope_region_begin(region);
	for (axis = 0; axis < 3; axis++) {
		MPI_Request rq[2];
		MPI_Status st[2];
		int len = m * m;
		if (nbr(axis, -1, coarse) == me) {
			/* alone along this axis: periodic copy, no message (NAS's
			 * "if (nprocs .ne. 1)") */
			face(u[k], m, axis, m, sbuf, 0);
			face(u[k], m, axis, 0, sbuf, 1);
			face(u[k], m, axis, 1, sbuf, 0);
			face(u[k], m, axis, m + 1, sbuf, 1);
			continue;
		}
		/* ready: post the receives from both directions */
		MPI_Irecv(rbuf[0], len, MPI_DOUBLE, nbr(axis, -1, coarse), 100 + 10 * axis + 1, cart, &rq[0]);
		MPI_Irecv(rbuf[1], len, MPI_DOUBLE, nbr(axis, +1, coarse), 100 + 10 * axis + 0, cart, &rq[1]);
		give3(axis, +1, k, coarse);
		give3(axis, -1, k, coarse);
		/* take3: unpack into the ghost planes */
		MPI_Waitall(2, rq, st);
		face(u[k], m, axis, 0, rbuf[0], 1);
		face(u[k], m, axis, m + 1, rbuf[1], 1);
	}
	parscope_region_end(region);
}

/* owner is the active rank a rank's coarse levels live on. */
static int owner(void)
{
	int c[3] = {coords[0] - coords[0] % 2, coords[1] - coords[1] % 2, coords[2] - coords[2] % 2};
	return rank_of(c);
}

/* members lists the ranks an active rank holds the coarse levels of. */
static int members(int out[8])
{
	int n = 0, dx, dy, dz;
	for (dx = 0; dx < 2; dx++)
		for (dy = 0; dy < 2; dy++)
			for (dz = 0; dz < 2; dz++) {
				int c[3] = {coords[0] + dx, coords[1] + dy, coords[2] + dz};
				if ((dx || dy || dz) && c[0] < dims[0] && c[1] < dims[1] && c[2] < dims[2])
					out[n++] = rank_of(c);
			}
	return n;
}

/* move sends level k's block of every inactive rank to its owner (up = 0)
 * or back (up = 1). */
static void move(int k, int up)
{
	int len = (size_[k] + 2) * (size_[k] + 2) * (size_[k] + 2), i, n, who[8];
	parscope_region_begin(up ? "block distribute" : "block agglomerate");
	if (active()) {
		n = members(who);
		for (i = 0; i < n; i++) {
			if (up)
				MPI_Send(u[k], len, MPI_DOUBLE, who[i], 201, cart);
			else
				MPI_Recv(rbuf[0], len, MPI_DOUBLE, MPI_ANY_SOURCE, 200, cart, MPI_STATUS_IGNORE);
		}
	} else if (up) {
		MPI_Recv(u[k], len, MPI_DOUBLE, owner(), 201, cart, MPI_STATUS_IGNORE);
	} else {
		MPI_Send(u[k], len, MPI_DOUBLE, owner(), 200, cart);
	}
	parscope_region_end(up ? "block distribute" : "block agglomerate");
}

/* smooth averages every interior point with its six neighbours. */
static void smooth(int k)
{
	int m = size_[k], i, j, l;
	double *v = u[k];
	for (i = 1; i <= m; i++)
		for (j = 1; j <= m; j++)
			for (l = 1; l <= m; l++)
				v[IDX(m, i, j, l)] = 0.5 * v[IDX(m, i, j, l)] +
						     (v[IDX(m, i - 1, j, l)] + v[IDX(m, i + 1, j, l)] + v[IDX(m, i, j - 1, l)] +
						      v[IDX(m, i, j + 1, l)] + v[IDX(m, i, j, l - 1)] + v[IDX(m, i, j, l + 1)]) /
							     12.0;
}

/* restrict_ averages 2x2x2 cells of level k into level k+1. */
static void restrict_(int k)
{
	int m = size_[k + 1], i, j, l, a, b, c;
	for (i = 1; i <= m; i++)
		for (j = 1; j <= m; j++)
			for (l = 1; l <= m; l++) {
				double s = 0;
				for (a = 0; a < 2; a++)
					for (b = 0; b < 2; b++)
						for (c = 0; c < 2; c++)
							s += u[k][IDX(size_[k], 2 * i - 1 + a, 2 * j - 1 + b, 2 * l - 1 + c)];
				u[k + 1][IDX(m, i, j, l)] = s / 8;
			}
}

/* interp adds level k+1 to level k by injection. */
static void interp(int k)
{
	int m = size_[k], i, j, l;
	for (i = 1; i <= m; i++)
		for (j = 1; j <= m; j++)
			for (l = 1; l <= m; l++)
				u[k][IDX(m, i, j, l)] += 0.5 * u[k + 1][IDX(size_[k + 1], (i + 1) / 2, (j + 1) / 2, (l + 1) / 2)];
}

static double norm(void)
{
	int m = size_[0], i, j, l;
	double s = 0, all = 0;
	parscope_region_begin("block norm");
	for (i = 1; i <= m; i++)
		for (j = 1; j <= m; j++)
			for (l = 1; l <= m; l++)
				s += u[0][IDX(m, i, j, l)] * u[0][IDX(m, i, j, l)];
	MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, cart);
	parscope_region_end("block norm");
	return sqrt(all);
}

int main(int argc, char **argv)
{
	int periods[3] = {1, 1, 1}, it, k, a;
	double r = 0;
	MPI_Init(&argc, &argv);
	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "-n"))
			n0 = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "-levels"))
			nlev = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "-iter"))
			nit = atoi(argv[a + 1]);
	}
	if (nlev < 2 || nlev > MAXL || n0 < 2 || (n0 >> (nlev - 1)) < 1 || nit < 1) {
		fprintf(stderr, "mg: want 2 <= -levels <= %d, -n >= 2^(levels-1), -iter >= 1\n", MAXL);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	nfine = nlev - 2; /* the two coarsest levels live on the active ranks */
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	MPI_Dims_create(np, 3, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
	MPI_Comm_rank(cart, &me);
	MPI_Cart_coords(cart, me, 3, coords);
	for (k = 0; k < nlev; k++) {
		size_[k] = n0 >> k;
		u[k] = calloc((size_t)(size_[k] + 2) * (size_[k] + 2) * (size_[k] + 2), sizeof(double));
	}
	sbuf = malloc(sizeof(double) * (size_t)(n0 + 2) * (n0 + 2) * (n0 + 2));
	rbuf[0] = malloc(sizeof(double) * (size_t)(n0 + 2) * (n0 + 2) * (n0 + 2));
	rbuf[1] = malloc(sizeof(double) * (size_t)(n0 + 2) * (n0 + 2));
	{
		int m = size_[0], i, j, l;
		for (i = 1; i <= m; i++)
			for (j = 1; j <= m; j++)
				for (l = 1; l <= m; l++)
					u[0][IDX(m, i, j, l)] = ((i * 7 + j * 13 + l * 17 + me * 31) % 97) / 97.0;
	}
	parscope_region_begin("block init");
	comm3(0, 0);
	parscope_region_end("block init");

	parscope_region_begin("loop 36");
	for (it = 0; it < nit; it++) {
		parscope_region_begin("loop down");
		for (k = 0; k + 1 < nlev; k++) {
			if (k + 1 > nfine && !active())
				break; /* this rank's coarse levels live on its owner */
			restrict_(k);
			if (k + 1 == nfine)
				move(k + 1, 0);
			comm3(k + 1, k + 1 >= nfine);
		}
		parscope_region_end("loop down");
		parscope_region_begin("block bottom");
		if (active()) {
			smooth(nlev - 1);
			comm3(nlev - 1, 1);
		}
		parscope_region_end("block bottom");
		parscope_region_begin("loop up");
		for (k = nlev - 2; k >= 0; k--) {
			if (k >= nfine && !active())
				continue;
			if (k + 1 == nfine)
				move(k + 1, 1);
			interp(k);
			smooth(k);
			comm3(k, k >= nfine);
		}
		parscope_region_end("loop up");
		r = norm();
	}
	parscope_region_end("loop 36");
	if (me == 0)
		printf("mg: %d ranks as %dx%dx%d, n=%d, %d levels, %d iterations, norm %.6e\n", np, dims[0], dims[1], dims[2],
		       n0, nlev, nit, r);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
