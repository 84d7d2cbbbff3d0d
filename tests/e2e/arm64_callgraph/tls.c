/* A __thread access from a shared library (tls_lib.c) through a TLS descriptor, between
 * ordinary calls. */
#include "fixture.h"
volatile long sink;

long tls_bump(long x);
KEEP long before(long x) { return x + 1; }
KEEP long between(long x) { return x * 2; }

int main(void) {
  BEGIN();
  for (long i = 0; i < 4; i++) {
    sink += before(i);
    sink += tls_bump(i);
    sink += between(i);
  }
  END();
  return 0;
}
