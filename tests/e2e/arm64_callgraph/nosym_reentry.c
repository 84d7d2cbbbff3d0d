/* A function that no symbol covers, re-entered by a tail jump to its first instruction while its
 * own call is still on the stack: the shape of Mono's JIT compiler in stripped mono-sgen. A
 * trampoline asks the runtime to compile a method; compiling it runs a class constructor, which
 * compiles more, and a small function of mono-sgen jumps to the first instruction of a compiler
 * function already on the stack (a tail call that recurses). Here main calls nosym (assembly in a
 * section of its own with no symbol: Callgrind names it after its address, and fold.py prints
 * such a function of the program as "(no symbol)"), which calls reenter(n); reenter calls leaf,
 * then tail_to_nosym(n - 1), a named function that jumps to nosym's first instruction (a jump,
 * not a call: nothing tells Callgrind that it is a function's first instruction), then second.
 * So nosym's code runs again in tail_to_nosym's frame and calls reenter'2 from there.
 *
 * Callgrind names a function without a symbol after the address of the BB that entered it, and
 * never marks a BB of it as a function's first instruction. Patch 0005 before issue 32 read the
 * jump to nosym's first instruction as a jump back into the middle of nosym, which made the call
 * to reenter that is still on the stack, and popped reenter's and tail_to_nosym's frames: second
 * then ran under nosym (nosym_reentry.unpatched.txt). In mono that popped Tiny2:Main's frame and
 * everything Main did after its first trampoline went to the code that invoked it (Main's
 * inclusive cost 39% instead of 81%). Stock Valgrind and 0005 as it is now keep the jump a jump. */
#include <stdint.h>
#include "fixture.h"
volatile long sink;

KEEP void leaf(void) { sink += 1; }
KEEP void second(void) { sink += 2; }
KEEP void after(void) { sink += 7; }
void tail_to_nosym(long n);
KEEP void reenter(long n) {
  leaf();
  tail_to_nosym(n - 1);
  second();
  sink += n;
}
/* nosym's address (it has no symbol to take it from). */
extern const uintptr_t nosym_addr;

#if defined(__x86_64__)
__asm__(
    /* nosym(n): if n != 0, reenter(n). */
    ".section .text.nosym, \"ax\", @progbits\n"
    ".Lnosym:\n"
    "  test %rdi, %rdi\n"
    "  jz 1f\n"
    "  sub $8, %rsp\n"
    "  call reenter\n"
    "  add $8, %rsp\n"
    "1:\n"
    "  ret\n"
    ".text\n"
    ".globl tail_to_nosym\n"
    ".type tail_to_nosym, @function\n"
    "tail_to_nosym:\n"
    "  jmp .Lnosym\n"
    ".size tail_to_nosym, .-tail_to_nosym\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl nosym_addr\n"
    "nosym_addr: .quad .Lnosym\n"
    ".text\n");
#elif defined(__aarch64__)
__asm__(
    ".section .text.nosym, \"ax\", %progbits\n"
    ".Lnosym:\n"
    "  cbz x0, 1f\n"
    "  stp x29, x30, [sp, #-16]!\n"
    "  mov x29, sp\n"
    "  bl reenter\n"
    "  ldp x29, x30, [sp], #16\n"
    "1:\n"
    "  ret\n"
    ".text\n"
    ".globl tail_to_nosym\n"
    ".type tail_to_nosym, %function\n"
    "tail_to_nosym:\n"
    "  b .Lnosym\n"
    ".size tail_to_nosym, .-tail_to_nosym\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl nosym_addr\n"
    "nosym_addr: .quad .Lnosym\n"
    ".text\n");
#else
#error "nosym_reentry.c: x86-64 or AArch64 only"
#endif

int main(void) {
  void (*nosym)(long) = (void (*)(long))nosym_addr;
  BEGIN();
  nosym(2);
  after();
  END();
  return 0;
}
