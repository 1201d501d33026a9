/* cycle: an initialisation, then 8 iterations of a two-phase loop:
 *   I  build a table of 2^18 pseudo-random doubles and a permutation
 *   A  a 1-D three-point stencil over the table, 6 sweeps
 *   B  a pointer chase through the permutation with integer hashing
 * Build: gcc -O2 -o cycle cycle.c */
#include <stdio.h>

#define N (1 << 18)
static double u[N], v[N];
static unsigned perm[N];

int main(void) {
	unsigned s = 7;
	for (int r = 0; r < 3; r++)                                    /* I */
		for (int i = 0; i < N; i++) { s = s * 1664525u + 1013904223u; u[i] = (s >> 8) / 16777216.0; perm[i] = s % N; }
	unsigned p = 0, h = 0;
	for (int it = 0; it < 8; it++) {
		for (int sw = 0; sw < 6; sw++) {                               /* A */
			for (int i = 1; i < N - 1; i++) v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
			for (int i = 1; i < N - 1; i++) u[i] = v[i];
		}
		for (int i = 0; i < 3 * N; i++) {                               /* B */
			p = perm[(p + i) & (N - 1)];
			h = (h ^ p) * 0x9E3779B1u;
			if (h & 1) h += p >> 3; else h -= p << 1;
		}
	}
	printf("%g %u\n", u[N / 3], h);
	return 0;
}
