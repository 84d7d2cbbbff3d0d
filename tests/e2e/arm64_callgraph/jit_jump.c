/* A hand-written "JIT" entered and left by jumps, the shape of PHP's tracing JIT: vm_run (assembly
 * with a symbol, like the VM's execute_ex) enters code written at run time into an anonymous
 * mapping by an indirect jump; that code makes a real call to jit_helper and leaves by jumping
 * back into the middle of vm_run, which then calls vm_step and goes round again. The generated
 * code runs in vm_run's frame: nothing calls it and it returns to nobody.
 *
 * Stock Callgrind 3.19 made both jumps calls (each leaves or enters another object, "???"), and
 * no return ever popped them: each round nests one level deeper (vm_run'2 under the JIT code
 * under vm_run, ...), see jit_jump.unpatched.txt. subprojects/valgrind-patches/0005-* keeps the
 * jump into the middle of foreign code a jump and makes the jump back a return to vm_run. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "fixture.h"
volatile long sink;

KEEP void jit_helper(void) { sink += 3; }
KEEP void vm_step(void) { sink += 5; }
KEEP void after(void) { sink += 7; }

/* vm_run(code, rounds): `rounds` times, jump into `code`, which jumps back to vm_resume_addr (a
 * local label in vm_run: no symbol, so it is the middle of vm_run for Valgrind). */
void vm_run(const void *code, long rounds);
extern const uintptr_t vm_resume_addr;

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl vm_run\n"
    ".type vm_run, @function\n"
    "vm_run:\n"
    "  push %rbx\n"
    "  push %r12\n"
    "  sub $8, %rsp\n" /* 16-byte aligned for the calls, the JIT code's too */
    "  mov %rdi, %rbx\n"
    "  mov %rsi, %r12\n"
    "1:\n"
    "  test %r12, %r12\n"
    "  jz 2f\n"
    "  jmp *%rbx\n"
    ".Lvm_resume:\n"
    "  dec %r12\n"
    "  call vm_step\n"
    "  jmp 1b\n"
    "2:\n"
    "  add $8, %rsp\n"
    "  pop %r12\n"
    "  pop %rbx\n"
    "  ret\n"
    ".size vm_run, .-vm_run\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl vm_resume_addr\n"
    "vm_resume_addr: .quad .Lvm_resume\n"
    ".text\n");

/* movabs rax, jit_helper; call rax; movabs rax, resume; jmp rax */
static size_t Emit(uint8_t *p) {
  uint64_t helper = (uintptr_t)jit_helper, resume = vm_resume_addr;
  size_t n = 0;
  p[n++] = 0x48, p[n++] = 0xb8, memcpy(p + n, &helper, 8), n += 8;
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
    "  bl vm_step\n"
    "  b 1b\n"
    "2:\n"
    "  ldp x19, x20, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size vm_run, .-vm_run\n"
    ".section .data.rel.ro, \"aw\"\n"
    ".balign 8\n"
    ".globl vm_resume_addr\n"
    "vm_resume_addr: .quad .Lvm_resume\n"
    ".text\n");

/* ldr x16, =jit_helper; blr x16; ldr x16, =resume; br x16; the two literals */
static size_t Emit(uint8_t *p) {
  uint32_t insn[4] = {0x58000090, 0xd63f0200, 0x58000090, 0xd61f0200};
  uint64_t lit[2] = {(uintptr_t)jit_helper, vm_resume_addr};
  memcpy(p, insn, sizeof insn);
  memcpy(p + sizeof insn, lit, sizeof lit);
  return sizeof insn + sizeof lit;
}
#else
#error "jit_jump.c: x86-64 or AArch64 only"
#endif

int main(void) {
  uint8_t *code = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  size_t n = Emit(code);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  __builtin___clear_cache((char *)code, (char *)code + n);
  BEGIN();
  vm_run(code, 4);
  after();
  END();
  return 0;
}
