/* C helpers that JIT code calls (JIT -> C -> JIT callbacks, a JIT -> C tail jump). They live in
   a shared library of their own so that a capture can --obj-skip it, as benchmark harnesses skip
   an interpreter's library. The JIT and the twin load the same library. */
#include <valgrind/callgrind.h>

#include "cgjit.h"

int cgjit_start_instr_in_helper;

int64_t c_apply(int64_t n, int64_t slot) {
  if (cgjit_start_instr_in_helper) { /* instrumentation starts mid-stack: main -> jit_cb -> here */
    cgjit_start_instr_in_helper = 0;
    CALLGRIND_START_INSTRUMENTATION;
  }
  cgjit_fn f = (cgjit_fn)CGJIT_TABLE[slot];
  return f(n) + f(n + 1);
}

int64_t c_leaf(int64_t n) {
  int64_t acc = 0;
  for (int64_t i = 0; i < n; i++) acc += i ^ 3;
  return acc;
}
