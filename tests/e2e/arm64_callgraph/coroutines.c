/* Two coroutines on stacks of their own (ucontext), the shape of green threads and of BEAM's
 * processes: run (the scheduler) resumes ping and pong in turn by swapcontext; each calls its
 * step function and switches back, ping once straight to pong. pong's steps cost about ten
 * times ping's, so that a frame of ping still collecting cost while pong runs shows in ping's
 * inclusive cost (checked by run.sh with coroutines.callers: no function above its only caller).
 *   run: resume ping -> ping_step(0), back to run
 *        resume pong -> pong_step(0), back to run
 *        resume ping -> ping_step(1), straight to pong -> pong_step(1), back to run
 *        resume ping -> ping_step(2), ping returns (to run, uc_link)
 *        resume pong -> pong_step(2), pong returns
 * The stacks are 4 MiB apart, more than the 2 MB by which Callgrind tells stacks apart.
 *
 * Callgrind keeps one call stack per thread. 0005 pops ping's frames when its swapcontext
 * returns into run's, as a longjmp's, and when run resumes ping, ping's code goes on in
 * swapcontext's frame: ping_step(1) and pong_step(1) under libc's swapcontext instead of under
 * ping and pong (coroutines.unpatched.txt). subprojects/valgrind-patches/0009-* suspends the
 * frames of the stack left and resumes them when SP comes back to it. */
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include "fixture.h"
volatile long sink;

static ucontext_t run_ctx, ping_ctx, pong_ctx;

KEEP void ping_step(long i) {
  for (long k = 0; k < 100; k++) sink += i + k;
}
KEEP void pong_step(long i) {
  for (long k = 0; k < 1000; k++) sink += i * k;
}
KEEP void ping(void) {
  ping_step(0);
  swapcontext(&ping_ctx, &run_ctx);
  ping_step(1);
  swapcontext(&ping_ctx, &pong_ctx);
  ping_step(2);
}
KEEP void pong(void) {
  pong_step(0);
  swapcontext(&pong_ctx, &run_ctx);
  pong_step(1);
  swapcontext(&pong_ctx, &run_ctx);
  pong_step(2);
}
KEEP void run(void) {
  swapcontext(&run_ctx, &ping_ctx);
  swapcontext(&run_ctx, &pong_ctx);
  swapcontext(&run_ctx, &ping_ctx);
  swapcontext(&run_ctx, &ping_ctx);
  swapcontext(&run_ctx, &pong_ctx);
}
KEEP void after(void) { sink += 7; }

static int make(ucontext_t *ctx, uint8_t *stack, size_t size, void (*fn)(void)) {
  if (getcontext(ctx) != 0) return -1;
  ctx->uc_stack.ss_sp = stack;
  ctx->uc_stack.ss_size = size;
  ctx->uc_link = &run_ctx;
  makecontext(ctx, fn, 0);
  return 0;
}

int main(void) {
  enum { kSize = 4 << 20 };
  uint8_t *stacks = mmap(0, 2 * kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stacks == MAP_FAILED) return 1;
  if (make(&ping_ctx, stacks, kSize, ping) != 0) return 1;
  if (make(&pong_ctx, stacks + kSize, kSize, pong) != 0) return 1;
  BEGIN();
  run();
  after();
  END();
  return 0;
}
