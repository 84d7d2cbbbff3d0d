/* A diamond: top calls left and right, both call bottom. */
#include "fixture.h"
volatile long sink;

KEEP long bottom(long x) { return x ^ 0x5a; }
KEEP long left(long x) { return bottom(x) + 1; }
KEEP long right(long x) { return bottom(x) * 2; }
KEEP long top(long x) { return left(x) + right(x); }

int main(void) {
  BEGIN();
  for (long i = 0; i < 10; i++) sink += top(i);
  END();
  return 0;
}
