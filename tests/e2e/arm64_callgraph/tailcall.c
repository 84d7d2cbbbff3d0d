/* A tail call: caller ends in `return callee(...)`, compiled to a jump (b / jmp). */
#include "fixture.h"
volatile long sink;

KEEP long callee(long x) { return x * 7 + 3; }
KEEP long caller(long x) {
  sink += x;
  return callee(x + 1);
}
KEEP long after(long x) { return x + 11; }

int main(void) {
  BEGIN();
  for (long i = 0; i < 5; i++) sink += caller(i);
  sink += after(1);
  END();
  return 0;
}
