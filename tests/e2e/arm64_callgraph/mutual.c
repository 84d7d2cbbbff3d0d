/* Mutual recursion (not tail calls): is_even calls is_odd calls is_even ... */
#include "fixture.h"
volatile long sink;

KEEP long is_odd(long n);
KEEP long is_even(long n) { return n == 0 ? 1 : 1 - is_odd(n - 1); }
KEEP long is_odd(long n) { return n == 0 ? 0 : 1 - is_even(n - 1); }

int main(void) {
  BEGIN();
  sink = is_even(9);
  END();
  return 0;
}
