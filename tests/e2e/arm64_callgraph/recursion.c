/* Plain recursion: fib calls itself twice (not a tail call). */
#include "fixture.h"
volatile long sink;

KEEP long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void) {
  BEGIN();
  sink = fib(12);
  END();
  return 0;
}
