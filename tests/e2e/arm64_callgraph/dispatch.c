/* A threaded interpreter, the shape of V8's bytecode handlers: each handler ends by jumping
 * through a table to the next bytecode's handler (an indirect tail call: `jmp *` / `br`), 200
 * times within one call of interp. Callgrind makes every tail call a call (a frame under the
 * handler that jumped); stock 3.19 nests one frame per bytecode, all popped only when interp
 * returns (op_inc'2 -> op_dec'2 -> op_inc'2 ..., inclusive costs far above 100%).
 * subprojects/valgrind-patches/0007-* pops back to the handler's earlier frame when the chain
 * of jump-entered frames already has it, so the nesting stays two handlers deep. */
#include "fixture.h"
volatile long sink;

typedef long (*handler)(long pc, long acc);
extern const handler table[];
#define CODE_LEN 201
static unsigned char code[CODE_LEN]; /* 0 inc, 1 dec, 2 end */

KEEP long op_inc(long pc, long acc) {
  sink += 1;
  return table[code[pc]](pc + 1, acc + 3);
}
KEEP long op_dec(long pc, long acc) {
  sink += 2;
  return table[code[pc]](pc + 1, acc - 1);
}
KEEP long op_end(long pc, long acc) { return acc + pc; }
const handler table[] = {op_inc, op_dec, op_end};

KEEP long interp(void) {
  long r = table[code[0]](1, 0);
  return r + 1; /* not a tail call: interp's frame stays below the handlers */
}
KEEP long after(long x) { return x + 5; }

int main(void) {
  for (int i = 0; i < CODE_LEN - 1; i++) code[i] = (unsigned char)(i & 1);
  code[CODE_LEN - 1] = 2;
  BEGIN();
  sink += interp();
  sink += after(1);
  END();
  return 0;
}
