/* Callees that move or drop their own return address, the shapes of V8's builtins. JIT code
 * (written at run time into an anonymous mapping, entered by a jump from vm_run as in jit_jump.c)
 *  - pushes two arguments and calls shift_call, which pops them into registers (on x86-64 it pops
 *    its return address first and pushes it back two slots higher), branches on the first, and
 *    tail-calls target by a jump; target returns straight to the JIT code (Function.prototype.call
 *    and apply);
 *  - calls enter_opt with the address of the JIT code's next part, which drops its return
 *    address (on AArch64 the 16 bytes above it), branches, and RETs to that address: the JIT code
 *    goes on in vm_run's frame (Builtins_BaselineOutOfLinePrologue entering optimized code);
 * then the JIT code calls jit_after and jumps back into the middle of vm_run.
 *
 * After the pop SP is above the SP Callgrind recorded for the call, and upstream's unwinding by
 * SP popped shift_call's frame as if it had returned; target's frame then took the SP of vm_run's
 * frame, target's RET (lower) matched no frame, and its frame stayed while the JIT code went on:
 * jit_after under target (moved_ra.unpatched.txt). subprojects/valgrind-patches/0008-* keeps the
 * frames (their SP becomes the current one), and pops enter_opt's kept frame at its RET, which
 * goes elsewhere than its return address above the SP the frame had (else jit_after would be
 * under enter_opt). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "fixture.h"
volatile long sink;

KEEP void target(long a, long b) { sink += a * 3 + b; }
KEEP void jit_after(void) { sink += 7; }
KEEP void after(void) { sink += 11; }

void vm_run(const void *code, long rounds);
void shift_call(void);
void enter_opt(void);
extern const uintptr_t vm_resume_addr;

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl vm_run\n"
    ".type vm_run, @function\n"
    "vm_run:\n"
    "  push %rbx\n"
    "  push %r12\n"
    "  sub $8, %rsp\n" /* 16-byte aligned for the JIT code's calls */
    "  mov %rdi, %rbx\n"
    "  mov %rsi, %r12\n"
    "1:\n"
    "  test %r12, %r12\n"
    "  jz 2f\n"
    "  jmp *%rbx\n"
    ".Lvm_resume:\n"
    "  dec %r12\n"
    "  jmp 1b\n"
    "2:\n"
    "  add $8, %rsp\n"
    "  pop %r12\n"
    "  pop %rbx\n"
    "  ret\n"
    ".size vm_run, .-vm_run\n"
    /* shift_call: return address and both stack arguments off the stack, a branch (a BB boundary
     * with SP 24 bytes above the call's), the return address back two slots higher, and a tail
     * call to target(a, b), which returns to shift_call's caller. */
    ".globl shift_call\n"
    ".type shift_call, @function\n"
    "shift_call:\n"
    "  pop %r11\n"
    "  pop %rdi\n"
    "  pop %rsi\n"
    "  cmp $0, %rdi\n"
    "  jge 3f\n"
    "  neg %rdi\n"
    "3:\n"
    "  push %r11\n"
    "  jmp target\n"
    ".size shift_call, .-shift_call\n"
    /* enter_opt(next): drops its return address, a branch (SP 8 bytes above the call's), and a
     * RET to next. */
    ".globl enter_opt\n"
    ".type enter_opt, @function\n"
    "enter_opt:\n"
    "  pop %r11\n"
    "  cmp %rdi, %rdi\n"
    "  je 4f\n"
    "  ud2\n"
    "4:\n"
    "  push %rdi\n"
    "  ret\n"
    ".size enter_opt, .-enter_opt\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl vm_resume_addr\n"
    "vm_resume_addr: .quad .Lvm_resume\n"
    ".text\n");

/* lea -2(%r12), %rax; push %rax; push %rax; movabs rax, shift_call; call rax;
 * lea next(%rip), %rdi; movabs rax, enter_opt; call rax; ud2; next: movabs rax, jit_after;
 * call rax; movabs rax, resume; jmp rax */
static size_t Emit(uint8_t *p) {
  uint64_t shift = (uintptr_t)shift_call, enter = (uintptr_t)enter_opt;
  uint64_t after_fn = (uintptr_t)jit_after, resume = vm_resume_addr;
  size_t n = 0;
  p[n++] = 0x49, p[n++] = 0x8d, p[n++] = 0x44, p[n++] = 0x24, p[n++] = 0xfe;
  p[n++] = 0x50, p[n++] = 0x50;
  p[n++] = 0x48, p[n++] = 0xb8, memcpy(p + n, &shift, 8), n += 8;
  p[n++] = 0xff, p[n++] = 0xd0;
  p[n++] = 0x48, p[n++] = 0x8d, p[n++] = 0x3d; /* lea disp32(%rip), %rdi: next is 14 on */
  p[n++] = 14, p[n++] = 0, p[n++] = 0, p[n++] = 0;
  p[n++] = 0x48, p[n++] = 0xb8, memcpy(p + n, &enter, 8), n += 8;
  p[n++] = 0xff, p[n++] = 0xd0;
  p[n++] = 0x0f, p[n++] = 0x0b; /* ud2: enter_opt does not return here */
  p[n++] = 0x48, p[n++] = 0xb8, memcpy(p + n, &after_fn, 8), n += 8; /* next */
  p[n++] = 0xff, p[n++] = 0xd0;
  p[n++] = 0x48, p[n++] = 0xb8, memcpy(p + n, &resume, 8), n += 8;
  p[n++] = 0xff, p[n++] = 0xe0;
  return n;
}
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl vm_run\n"
    ".type vm_run, %function\n"
    "vm_run:\n"
    "  stp x29, x30, [sp, #-32]!\n"
    "  mov x29, sp\n"
    "  stp x19, x20, [sp, #16]\n"
    "  mov x19, x0\n"
    "  mov x20, x1\n"
    "1:\n"
    "  cbz x20, 2f\n"
    "  br x19\n"
    ".Lvm_resume:\n"
    "  sub x20, x20, #1\n"
    "  b 1b\n"
    "2:\n"
    "  ldp x19, x20, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size vm_run, .-vm_run\n"
    /* shift_call: both stack arguments off the stack (SP 16 bytes above the call's), a branch,
     * and a tail call to target(a, b), which returns (X30) to shift_call's caller. */
    ".globl shift_call\n"
    ".type shift_call, %function\n"
    "shift_call:\n"
    "  ldp x0, x1, [sp], #16\n"
    "  cmp x0, #0\n"
    "  b.ge 3f\n"
    "  neg x0, x0\n"
    "3:\n"
    "  b target\n"
    ".size shift_call, .-shift_call\n"
    /* enter_opt(next): drops the 16 bytes above its call's SP, a branch, and a RET to next. */
    ".globl enter_opt\n"
    ".type enter_opt, %function\n"
    "enter_opt:\n"
    "  add sp, sp, #16\n"
    "  cmp x0, x0\n"
    "  b.eq 4f\n"
    "  brk #0\n"
    "4:\n"
    "  ret x0\n"
    ".size enter_opt, .-enter_opt\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl vm_resume_addr\n"
    "vm_resume_addr: .quad .Lvm_resume\n"
    ".text\n");

/* sub x0, x20, #2; stp x0, x0, [sp, #-16]!; ldr x16, =shift_call; blr x16;
 * sub sp, sp, #16; adr x0, next; ldr x16, =enter_opt; blr x16; brk #0;
 * next: ldr x16, =jit_after; blr x16; ldr x16, =resume; br x16; nop; the four literals */
static size_t Emit(uint8_t *p) {
  uint32_t insn[14] = {0xd1000a80, 0xa9bf03e0, 0x58000190, 0xd63f0200, 0xd10043ff,
                       0x10000080, 0x58000150, 0xd63f0200, 0xd4200000, 0x58000130,
                       0xd63f0200, 0x58000130, 0xd61f0200, 0xd503201f};
  uint64_t lit[4] = {(uintptr_t)shift_call, (uintptr_t)enter_opt, (uintptr_t)jit_after,
                     vm_resume_addr};
  memcpy(p, insn, sizeof insn);
  memcpy(p + sizeof insn, lit, sizeof lit);
  return sizeof insn + sizeof lit;
}
#else
#error "moved_ra.c: x86-64 or AArch64 only"
#endif

int main(void) {
  uint8_t *code = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  size_t n = Emit(code);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  __builtin___clear_cache((char *)code, (char *)code + n);
  BEGIN();
  vm_run(code, 4); /* first arguments 2, 1, 0, -1: both ways through shift_call's branch */
  after();
  END();
  return sink == 4 * 7 + 11 + (6 + 2) + (3 + 1) + 0 + (3 - 1) ? 0 : 2;
}
