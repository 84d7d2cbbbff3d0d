/* longjmp out of a recursion back into main, then more work from main. */
#include <setjmp.h>
#include "fixture.h"
volatile long sink;
static jmp_buf env;

KEEP void dive(int n) {
  sink++;
  if (n == 0) longjmp(env, 1);
  dive(n - 1);
  sink++;
}
KEEP long later(long x) { return x * 5; }
KEEP long again(long x) { return later(x) + 1; }

int main(void) {
  BEGIN();
  if (!setjmp(env)) dive(4);
  sink += later(1);
  sink += again(2);
  END();
  return 0;
}
