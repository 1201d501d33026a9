/* seq: four phases that run one after the other, each once:
 *   I  fill an array with a linear congruential generator
 *   S  sort it with qsort
 *   M  multiply two 96x96 matrices, 30 times
 *   H  hash strings built from the array (FNV-1a), 20 passes
 * Build: gcc -O2 -o seq seq.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200000
static unsigned a[N];
static double x[96][96], y[96][96], z[96][96];

static int cmp(const void *p, const void *q) {
	unsigned u = *(const unsigned *)p, v = *(const unsigned *)q;
	return (u > v) - (u < v);
}

int main(void) {
	unsigned s = 12345, h = 2166136261u;
	for (int r = 0; r < 12; r++)                     /* I */
		for (int i = 0; i < N; i++) { s = s * 1103515245u + 12345u; a[i] ^= s >> 3; }
	qsort(a, N, sizeof a[0], cmp);                    /* S */
	for (int i = 0; i < 96; i++)
		for (int j = 0; j < 96; j++) { x[i][j] = (i + j) % 7; y[i][j] = (i * j) % 5; }
	for (int r = 0; r < 30; r++)                      /* M */
		for (int i = 0; i < 96; i++)
			for (int j = 0; j < 96; j++) {
				double t = 0;
				for (int k = 0; k < 96; k++) t += x[i][k] * y[k][j];
				z[i][j] = t + r;
			}
	char buf[32];
	for (int r = 0; r < 20; r++)                      /* H */
		for (int i = r; i < N; i += 16) {
			int n = snprintf(buf, sizeof buf, "%u", a[i]);
			for (int k = 0; k < n; k++) { h ^= (unsigned char)buf[k]; h *= 16777619u; }
		}
	printf("%u %g %u\n", a[N / 2], z[5][7], h);
	return 0;
}
