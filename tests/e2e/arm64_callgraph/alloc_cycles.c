/* Several malloc/free cycles in one frame, with ordinary calls between them. */
#include <stdlib.h>
#include "fixture.h"
volatile long sink;

KEEP void init(long *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
}
KEEP long use(const long *p, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  return s;
}
KEEP void report(long r) { sink += r; }
KEEP long cycle(int k) {
  long r = 0;
  for (int j = 0; j < 3; j++) {
    long *p = malloc(8 * sizeof(long));
    init(p, 8);
    r += use(p, 8) + k;
    free(p);
    report(r);
  }
  return r;
}
KEEP void finish(void) { sink++; }

int main(void) {
  BEGIN();
  for (int k = 0; k < 4; k++) sink += cycle(k);
  finish();
  END();
  return 0;
}
