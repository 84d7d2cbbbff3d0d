/* Calls through the PLT into libc (memset, malloc, free), each followed by an ordinary call. */
#include <stdlib.h>
#include <string.h>
#include "fixture.h"
volatile long sink;
volatile size_t len = 64; /* keeps memset a real libc call */
void *volatile keep;      /* keeps malloc/free from being elided */

KEEP void leaf(const char *buf) { sink += buf[3]; }
KEEP void sibling(long x) { sink += x; }
KEEP void outer(int n) {
  char buf[64];
  memset(buf, n, len);
  leaf(buf);
  keep = malloc(32);
  sibling(n);
  free(keep);
  sibling(n + 1);
}

int main(void) {
  BEGIN();
  for (int i = 0; i < 4; i++) outer(i);
  sibling(9);
  END();
  return 0;
}
