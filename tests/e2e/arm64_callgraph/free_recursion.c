/* free during recursion: each level allocates, recurses, then sums and frees its buffer. */
#include <stdlib.h>
#include "fixture.h"
volatile long sink;

KEEP void fill(long *buf, int n, int depth) {
  for (int i = 0; i < n; i++) buf[i] = i * depth;
}
KEEP long sum(const long *buf, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s += buf[i] * buf[i];
  return s;
}
KEEP long compute_variance(int depth) {
  if (depth == 0) return 0;
  long *buf = malloc(16 * sizeof(long));
  fill(buf, 16, depth);
  long r = compute_variance(depth - 1);
  long s = sum(buf, 16);
  free(buf);
  return r + s;
}

int main(void) {
  BEGIN();
  sink = compute_variance(5);
  END();
  return 0;
}
