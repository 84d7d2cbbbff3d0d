/* A chain: main -> a -> b -> c, each doing work after its callee returns. */
#include "fixture.h"
volatile long sink;

KEEP long c(long x) { return x * 3 + 1; }
KEEP long b(long x) { return c(x) + 2; }
KEEP long a(long x) { return b(x) * 5; }

int main(void) {
  BEGIN();
  for (long i = 0; i < 10; i++) sink += a(i);
  END();
  return 0;
}
