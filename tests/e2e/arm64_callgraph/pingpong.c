/* Mutual recursion through tail calls: ping and pong call into libc (memset, through the PLT),
 * then end in `return pong(..)` / `return ping(..)` (jumps); the last one tail-calls done. */
#include <string.h>
#include "fixture.h"
volatile long sink;
volatile size_t len = 16; /* keeps memset a real libc call */
char buf[16];

KEEP long done(long n) { return n + 100; }
KEEP long pong(long n);
KEEP long ping(long n) {
  memset(buf, (int)n, len);
  sink++;
  if (n <= 0) return done(n);
  return pong(n - 1);
}
KEEP long pong(long n) {
  memset(buf, (int)n + 1, len);
  sink += 2;
  if (n <= 0) return done(n);
  return ping(n - 1);
}
KEEP long after(long x) { return x * 2; }

int main(void) {
  BEGIN();
  sink += ping(6);
  sink += after(3);
  END();
  return 0;
}
