/* A frame that frees a buffer, then tail-calls (`return finish(v)` is a jump). */
#include <stdlib.h>
#include "fixture.h"
volatile long sink;
long *volatile keep; /* keeps malloc/free from being elided */

KEEP long finish(long v) {
  for (int i = 0; i < 20; i++) v = v * 3 + i;
  return v;
}
KEEP long consume(long n) {
  keep = malloc(4 * sizeof(long));
  keep[0] = n;
  keep[1] = n * 2;
  long v = keep[0] + keep[1] + (long)sink;
  free(keep);
  return finish(v);
}
KEEP long other(long x) { return x + 1; }

int main(void) {
  BEGIN();
  for (long i = 0; i < 4; i++) sink += consume(i);
  sink += other(2);
  END();
  return 0;
}
