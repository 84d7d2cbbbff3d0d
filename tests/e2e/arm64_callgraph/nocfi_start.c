/* Instrumentation starts two frames deep in code without CFI: main -> nocfi_outer ->
 * nocfi_inner (assembly with a frame record / frame pointer but no unwind information) ->
 * start_here, which starts instrumentation. Callgrind's call stack is empty then; the returns to
 * nocfi_inner, nocfi_outer and main must rebuild their frames. */
#include "fixture.h"
volatile long sink;

void nocfi_outer(void);
KEEP long work1(long x) { return x + 1; }
KEEP void work_inner(void) { sink += 2; }
KEEP void work_outer(void) { sink += 3; }
KEEP long work3(long x) { return x * 4; }
KEEP void start_here(void) {
  BEGIN();
  sink += work1(1);
}

#if defined(__aarch64__)
__asm__(
    ".text\n"
    ".p2align 2\n"
    ".globl nocfi_outer\n"
    ".type nocfi_outer, %function\n"
    "nocfi_outer:\n"
    "  stp x29, x30, [sp, #-16]!\n"
    "  mov x29, sp\n"
    "  bl nocfi_inner\n"
    "  bl work_outer\n"
    "  ldp x29, x30, [sp], #16\n"
    "  ret\n"
    ".size nocfi_outer, .-nocfi_outer\n"
    ".p2align 2\n"
    ".type nocfi_inner, %function\n"
    "nocfi_inner:\n"
    "  stp x29, x30, [sp, #-16]!\n"
    "  mov x29, sp\n"
    "  bl start_here\n"
    "  bl work_inner\n"
    "  ldp x29, x30, [sp], #16\n"
    "  ret\n"
    ".size nocfi_inner, .-nocfi_inner\n");
#elif defined(__x86_64__)
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl nocfi_outer\n"
    ".type nocfi_outer, @function\n"
    "nocfi_outer:\n"
    "  push %rbp\n"
    "  mov %rsp, %rbp\n"
    "  call nocfi_inner\n"
    "  call work_outer\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size nocfi_outer, .-nocfi_outer\n"
    ".p2align 4\n"
    ".type nocfi_inner, @function\n"
    "nocfi_inner:\n"
    "  push %rbp\n"
    "  mov %rsp, %rbp\n"
    "  call start_here\n"
    "  call work_inner\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size nocfi_inner, .-nocfi_inner\n");
#else
#error "fixture written for aarch64 and x86_64"
#endif

int main(void) {
  nocfi_outer();
  sink += work3(5);
  END();
  return 0;
}
