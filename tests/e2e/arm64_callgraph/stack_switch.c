/* Two stacks, the shape of BEAM's JIT: Erlang code runs on the process's own stack and switches
 * the stack pointer back to the scheduler's C stack for each call into the runtime. main calls
 * on_stack, which moves SP to a stack of its own (an anonymous mapping, far from the C stack)
 * and calls worker there; worker calls leaf, then twice rt_call, which moves SP back to the C
 * stack below on_stack's frame, calls helper there and moves SP back; then leaf again. Each
 * function returns by a RET to its caller on its own stack.
 *
 * Stock Callgrind 3.19 pops every frame whose SP is below the current one: the switch to the C
 * stack (the higher address) dropped worker and rt_call while they still ran, so helper appeared
 * under on_stack and the RETs of rt_call and worker matched nothing and were made calls
 * (stack_switch.unpatched.txt). subprojects/valgrind-patches/0005-* keeps frames of another
 * stack (SP more than 2 MB away) when SP moves past them. */
#include <stdint.h>
#include <sys/mman.h>
#include "fixture.h"
volatile long sink;

KEEP void leaf(void) { sink += 1; }
KEEP void deep(void) { sink += 2; }
KEEP void helper(void) {
  sink += 3;
  deep();
}
/* on_stack(top, fn): fn() with SP = top. rt_call(fn): fn() on the C stack on_stack left. */
void on_stack(void *top, void (*fn)(void));
void rt_call(void (*fn)(void));
KEEP void worker(void) {
  leaf();
  rt_call(helper);
  sink += 4;
  rt_call(helper);
  leaf();
}
KEEP void after(void) { sink += 7; }

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl on_stack\n"
    ".type on_stack, @function\n"
    "on_stack:\n"
    "  push %rbx\n" /* 16-byte aligned from here: c_sp is a valid SP for calls */
    "  mov %rsp, %rbx\n"
    "  mov %rsp, c_sp(%rip)\n"
    "  mov %rdi, %rsp\n"
    "  call *%rsi\n"
    "  mov %rbx, %rsp\n"
    "  pop %rbx\n"
    "  ret\n"
    ".size on_stack, .-on_stack\n"
    ".globl rt_call\n"
    ".type rt_call, @function\n"
    "rt_call:\n"
    "  push %rbx\n"
    "  mov %rsp, %rbx\n"
    "  mov c_sp(%rip), %rsp\n"
    "  call *%rdi\n"
    "  mov %rbx, %rsp\n"
    "  pop %rbx\n"
    "  ret\n"
    ".size rt_call, .-rt_call\n"
    ".local c_sp\n"
    ".comm c_sp, 8, 8\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl on_stack\n"
    ".type on_stack, %function\n"
    "on_stack:\n"
    "  stp x29, x30, [sp, #-32]!\n"
    "  mov x29, sp\n"
    "  str x19, [sp, #16]\n"
    "  mov x19, sp\n"
    "  adrp x9, c_sp\n"
    "  mov x10, sp\n"
    "  str x10, [x9, :lo12:c_sp]\n"
    "  mov sp, x0\n"
    "  blr x1\n"
    "  mov sp, x19\n"
    "  ldr x19, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size on_stack, .-on_stack\n"
    ".globl rt_call\n"
    ".type rt_call, %function\n"
    "rt_call:\n"
    "  stp x29, x30, [sp, #-32]!\n"
    "  mov x29, sp\n"
    "  str x19, [sp, #16]\n"
    "  mov x19, sp\n"
    "  adrp x9, c_sp\n"
    "  ldr x10, [x9, :lo12:c_sp]\n"
    "  mov sp, x10\n"
    "  blr x0\n"
    "  mov sp, x19\n"
    "  ldr x19, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size rt_call, .-rt_call\n"
    ".local c_sp\n"
    ".comm c_sp, 8, 8\n");
#else
#error "stack_switch.c: x86-64 or AArch64 only"
#endif

int main(void) {
  enum { kSize = 1 << 16 };
  uint8_t *stack = mmap(0, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return 1;
  BEGIN();
  on_stack(stack + kSize, worker);
  after();
  END();
  return 0;
}
