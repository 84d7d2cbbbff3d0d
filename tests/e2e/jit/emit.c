/* Hand-assembled machine code of the test JIT, for x86-64 and AArch64. Each function follows its
   statements in workload.mini; L(n) starts the bytes of line n. Calls go through the table at
   CGJIT_TABLE_ADDR (x86-64: mov rax,[abs]; call/jmp rax. AArch64: movz x16; ldr x16,[x16,#8*i];
   blr/br x16), so the code is position independent except tail_a's direct jump to tail_b. */
#include <string.h>

#include "cgjit.h"

struct asm_state {
  struct cgjit_prog *prog;
  int blob;
  struct cgjit_func *fn;
};

static uint32_t Pos(struct asm_state *s) { return s->prog->blob_size[s->blob]; }

static void Byte(struct asm_state *s, uint8_t b) {
  s->prog->blob[s->blob][s->prog->blob_size[s->blob]++] = b;
}

static void Bytes(struct asm_state *s, const uint8_t *bytes, size_t n) {
  for (size_t i = 0; i < n; i++) Byte(s, bytes[i]);
}
#define B(...) \
  Bytes(s, (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static void Le32(struct asm_state *s, uint32_t v) {
  for (int i = 0; i < 4; i++) Byte(s, (uint8_t)(v >> (8 * i)));
}

static void Begin(struct asm_state *s, int blob, const char *name, int slot) {
  s->blob = blob;
  if (blob == BLOB_MAIN) /* 16-byte aligned functions, padded with traps */
    while (Pos(s) % 16) Byte(s, 0);
  struct cgjit_func *f = &s->prog->funcs[s->prog->nfuncs++];
  memset(f, 0, sizeof *f);
  f->name = name;
  f->slot = slot;
  f->blob = blob;
  f->off = Pos(s);
  s->fn = f;
}

static void End(struct asm_state *s) { s->fn->size = Pos(s) - s->fn->off; }

static void L(struct asm_state *s, uint32_t line) {
  struct cgjit_func *f = s->fn;
  f->lines[f->nlines].off = Pos(s) - f->off;
  f->lines[f->nlines].line = line;
  f->nlines++;
}

/* ---- x86-64 ---- */

static void X86LoadSlot(struct asm_state *s, int slot) { /* mov rax, [abs32 table+8*slot] */
  B(0x48, 0x8b, 0x04, 0x25);
  Le32(s, (uint32_t)(CGJIT_TABLE_ADDR + 8 * (uint32_t)slot));
}
static void X86CallSlot(struct asm_state *s, int slot) {
  X86LoadSlot(s, slot);
  B(0xff, 0xd0); /* call rax */
}
/* A forward rel8 jump: emit the opcode, return where to patch. */
static uint32_t X86Jcc8(struct asm_state *s, uint8_t opcode) {
  Byte(s, opcode);
  Byte(s, 0);
  return Pos(s);
}
static void X86Bind8(struct asm_state *s, uint32_t after) {
  s->prog->blob[s->blob][after - 1] = (uint8_t)(Pos(s) - after);
}
static void X86Jmp8Back(struct asm_state *s, uint8_t opcode, uint32_t target) {
  Byte(s, opcode);
  Byte(s, (uint8_t)(int8_t)((int32_t)target - (int32_t)(Pos(s) + 1)));
}

static void EmitX86(struct asm_state *s) {
  uint32_t j, done, loop, tail_b;

  Begin(s, BLOB_MAIN, "jit_square", SLOT_SQUARE);
  L(s, 5), B(0x48, 0x89, 0xf8, /* mov rax,rdi */ 0x48, 0x0f, 0xaf, 0xc7, /* imul rax,rdi */ 0xc3);
  End(s);

  Begin(s, BLOB_MAIN, "jit_fib", SLOT_FIB);
  L(s, 7), B(0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x08); /* push rbx; push r12; sub rsp,8 */
  L(s, 8), B(0x48, 0x89, 0xfb, 0x48, 0x83, 0xff, 0x02); /* mov rbx,rdi; cmp rdi,2 */
  j = X86Jcc8(s, 0x7c);                                  /* jl base */
  L(s, 9), B(0x48, 0x8d, 0x7b, 0xff), X86CallSlot(s, SLOT_FIB), B(0x49, 0x89, 0xc4);
  L(s, 10), B(0x48, 0x8d, 0x7b, 0xfe), X86CallSlot(s, SLOT_FIB);
  L(s, 11), B(0x4c, 0x01, 0xe0); /* add rax,r12 */
  done = X86Jcc8(s, 0xeb);
  X86Bind8(s, j);
  L(s, 8), B(0x48, 0x89, 0xd8); /* base: mov rax,rbx */
  X86Bind8(s, done);
  L(s, 11), B(0x48, 0x83, 0xc4, 0x08, 0x41, 0x5c, 0x5b, 0xc3); /* add rsp,8; pop r12; pop rbx; ret */
  End(s);

  Begin(s, BLOB_MAIN, "jit_sum", SLOT_SUM);
  L(s, 13), B(0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x08);
  L(s, 14), B(0x48, 0x89, 0xfb, 0x45, 0x31, 0xe4); /* mov rbx,rdi; xor r12d,r12d */
  loop = Pos(s);
  L(s, 15), B(0x48, 0x85, 0xdb); /* test rbx,rbx */
  done = X86Jcc8(s, 0x74);
  L(s, 16), B(0x48, 0x89, 0xdf), X86CallSlot(s, SLOT_SQUARE);
  B(0x49, 0x01, 0xc4, 0x48, 0xff, 0xcb); /* add r12,rax; dec rbx */
  X86Jmp8Back(s, 0xeb, loop);
  X86Bind8(s, done);
  L(s, 17), B(0x4c, 0x89, 0xe0, 0x48, 0x83, 0xc4, 0x08, 0x41, 0x5c, 0x5b, 0xc3);
  End(s);

  Begin(s, BLOB_MAIN, "jit_cb", SLOT_CB);
  L(s, 19), B(0x53); /* push rbx (stack alignment for the C call) */
  L(s, 20), B(0xbe, SLOT_SQUARE, 0, 0, 0), X86CallSlot(s, SLOT_C_APPLY); /* mov esi,slot */
  B(0x48, 0x83, 0xc0, 0x01, 0x5b, 0xc3); /* add rax,1; pop rbx; ret */
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_b", SLOT_TAIL_B);
  tail_b = Pos(s);
  L(s, 23), B(0x31, 0xc0); /* xor eax,eax */
  loop = Pos(s);
  L(s, 24), B(0x48, 0x85, 0xff);
  done = X86Jcc8(s, 0x74);
  L(s, 25), B(0x48, 0x01, 0xf8, 0x48, 0xff, 0xcf); /* add rax,rdi; dec rdi */
  X86Jmp8Back(s, 0xeb, loop);
  X86Bind8(s, done);
  L(s, 26), B(0xc3);
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_a", SLOT_TAIL_A);
  L(s, 29), B(0x48, 0x83, 0xc7, 0x03, 0xe9); /* add rdi,3; jmp rel32 jit_tail_b */
  Le32(s, (uint32_t)((int32_t)tail_b - (int32_t)(Pos(s) + 4)));
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_c", SLOT_TAIL_C);
  L(s, 32), B(0x48, 0x01, 0xff), X86LoadSlot(s, SLOT_C_LEAF), B(0xff, 0xe0); /* jmp rax */
  End(s);

  Begin(s, BLOB_MOVED, "jit_moved", SLOT_MOVED);
  L(s, 35), B(0x31, 0xc0);
  loop = Pos(s);
  L(s, 36), B(0x48, 0x85, 0xff);
  done = X86Jcc8(s, 0x74);
  L(s, 37), B(0x48, 0x83, 0xc0, 0x05, 0x48, 0xff, 0xcf); /* add rax,5; dec rdi */
  X86Jmp8Back(s, 0xeb, loop);
  X86Bind8(s, done);
  L(s, 38), B(0xc3);
  End(s);

  Begin(s, BLOB_REUSE_V1, "jit_reuse_v1", SLOT_REUSE_V1);
  L(s, 41), B(0x48, 0x8d, 0x47, 0x01, 0xc3); /* lea rax,[rdi+1]; ret */
  End(s);

  Begin(s, BLOB_REUSE_V2, "jit_reuse_v2", SLOT_REUSE_V2);
  L(s, 44), B(0x48, 0x89, 0xf8, 0x48, 0x01, 0xc0, 0x48, 0x83, 0xc0, 0x07, 0xc3);
  End(s);
}

/* ---- AArch64 ---- */

enum { X0 = 0, X1 = 1, X16 = 16, X19 = 19, X20 = 20, FP = 29, LR = 30, SP = 31, XZR = 31 };

static void A64(struct asm_state *s, uint32_t insn) { Le32(s, insn); }
static uint32_t MovReg(int d, int m) { return 0xAA0003E0u | (uint32_t)m << 16 | (uint32_t)d; }
static uint32_t Movz(int d, uint32_t imm16) { return 0xD2800000u | imm16 << 5 | (uint32_t)d; }
static uint32_t AddImm(int d, int n, uint32_t imm) {
  return 0x91000000u | imm << 10 | (uint32_t)n << 5 | (uint32_t)d;
}
static uint32_t SubImm(int d, int n, uint32_t imm) {
  return 0xD1000000u | imm << 10 | (uint32_t)n << 5 | (uint32_t)d;
}
static uint32_t AddReg(int d, int n, int m) {
  return 0x8B000000u | (uint32_t)m << 16 | (uint32_t)n << 5 | (uint32_t)d;
}
static const uint32_t kRet = 0xD65F03C0u;
static const uint32_t kMovFpSp = 0x910003FDu;          /* mov x29, sp */
static const uint32_t kPushFpLr32 = 0xA9BE7BFDu;       /* stp x29,x30,[sp,#-32]! */
static const uint32_t kPopFpLr32 = 0xA8C27BFDu;        /* ldp x29,x30,[sp],#32 */
static const uint32_t kPushFpLr16 = 0xA9BF7BFDu;       /* stp x29,x30,[sp,#-16]! */
static const uint32_t kPopFpLr16 = 0xA8C17BFDu;        /* ldp x29,x30,[sp],#16 */
static const uint32_t kSaveX19X20 = 0xA90153F3u;       /* stp x19,x20,[sp,#16] */
static const uint32_t kRestoreX19X20 = 0xA94153F3u;    /* ldp x19,x20,[sp,#16] */

static void A64LoadSlot(struct asm_state *s, int slot) {
  A64(s, 0xD2A00000u | (uint32_t)(CGJIT_TABLE_ADDR >> 16) << 5 | X16); /* movz x16,#hi,lsl 16 */
  A64(s, 0xF9400000u | (uint32_t)slot << 10 | X16 << 5 | X16);        /* ldr x16,[x16,#8*slot] */
}
static void A64CallSlot(struct asm_state *s, int slot) {
  A64LoadSlot(s, slot);
  A64(s, 0xD63F0000u | X16 << 5); /* blr x16 */
}
/* Branch with a 19-bit (B.cond, CBZ) or 26-bit (B) word offset, patched once the target is known. */
static uint32_t A64Fwd(struct asm_state *s, uint32_t insn) {
  A64(s, insn);
  return Pos(s) - 4;
}
static uint32_t A64Disp(uint32_t insn, int32_t words) {
  if ((insn & 0xFC000000u) == 0x14000000u) return insn | ((uint32_t)words & 0x3FFFFFFu);
  return insn | ((uint32_t)words & 0x7FFFFu) << 5;
}
static void A64Bind(struct asm_state *s, uint32_t at) {
  uint8_t *p = &s->prog->blob[s->blob][at];
  uint32_t insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  insn = A64Disp(insn, ((int32_t)Pos(s) - (int32_t)at) / 4);
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(insn >> (8 * i));
}
static void A64Back(struct asm_state *s, uint32_t insn, uint32_t target) {
  A64(s, A64Disp(insn, ((int32_t)target - (int32_t)Pos(s)) / 4));
}
#define A64_B 0x14000000u
#define A64_BLT 0x5400000Bu
#define A64_CBZ(t) (0xB4000000u | (t))

static void A64CountLoop(struct asm_state *s, int line_test, int line_body, uint32_t add_step) {
  uint32_t loop = Pos(s);
  L(s, (uint32_t)line_test);
  uint32_t done = A64Fwd(s, A64_CBZ(X0));
  L(s, (uint32_t)line_body), A64(s, add_step), A64(s, SubImm(X0, X0, 1));
  A64Back(s, A64_B, loop);
  A64Bind(s, done);
}

static void EmitA64(struct asm_state *s) {
  uint32_t j, done, loop, tail_b;

  Begin(s, BLOB_MAIN, "jit_square", SLOT_SQUARE);
  L(s, 5), A64(s, 0x9B007C00u /* mul x0,x0,x0 */), A64(s, kRet);
  End(s);

  Begin(s, BLOB_MAIN, "jit_fib", SLOT_FIB);
  L(s, 7), A64(s, kPushFpLr32), A64(s, kMovFpSp), A64(s, kSaveX19X20);
  L(s, 8), A64(s, MovReg(X19, X0)), A64(s, 0xF100081Fu /* cmp x0,#2 */);
  j = A64Fwd(s, A64_BLT);
  L(s, 9), A64(s, SubImm(X0, X19, 1)), A64CallSlot(s, SLOT_FIB), A64(s, MovReg(X20, X0));
  L(s, 10), A64(s, SubImm(X0, X19, 2)), A64CallSlot(s, SLOT_FIB);
  L(s, 11), A64(s, AddReg(X0, X0, X20));
  done = A64Fwd(s, A64_B); /* a plain B: Valgrind 3.19 unpatched calls it a call */
  A64Bind(s, j);
  L(s, 8), A64(s, MovReg(X0, X19));
  A64Bind(s, done);
  L(s, 11), A64(s, kRestoreX19X20), A64(s, kPopFpLr32), A64(s, kRet);
  End(s);

  Begin(s, BLOB_MAIN, "jit_sum", SLOT_SUM);
  L(s, 13), A64(s, kPushFpLr32), A64(s, kMovFpSp), A64(s, kSaveX19X20);
  L(s, 14), A64(s, MovReg(X19, X0)), A64(s, Movz(X20, 0));
  loop = Pos(s);
  L(s, 15);
  done = A64Fwd(s, A64_CBZ(X19));
  L(s, 16), A64(s, MovReg(X0, X19)), A64CallSlot(s, SLOT_SQUARE);
  A64(s, AddReg(X20, X20, X0)), A64(s, SubImm(X19, X19, 1));
  A64Back(s, A64_B, loop);
  A64Bind(s, done);
  L(s, 17), A64(s, MovReg(X0, X20)), A64(s, kRestoreX19X20), A64(s, kPopFpLr32), A64(s, kRet);
  End(s);

  Begin(s, BLOB_MAIN, "jit_cb", SLOT_CB);
  L(s, 19), A64(s, kPushFpLr16), A64(s, kMovFpSp);
  L(s, 20), A64(s, Movz(X1, SLOT_SQUARE)), A64CallSlot(s, SLOT_C_APPLY);
  A64(s, AddImm(X0, X0, 1)), A64(s, kPopFpLr16), A64(s, kRet);
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_b", SLOT_TAIL_B);
  tail_b = Pos(s);
  L(s, 23), A64(s, Movz(X1, 0));
  A64CountLoop(s, 24, 25, AddReg(X1, X1, X0));
  L(s, 26), A64(s, MovReg(X0, X1)), A64(s, kRet);
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_a", SLOT_TAIL_A);
  L(s, 29), A64(s, AddImm(X0, X0, 3)), A64Back(s, A64_B, tail_b); /* tail jump: plain B */
  End(s);

  Begin(s, BLOB_MAIN, "jit_tail_c", SLOT_TAIL_C);
  L(s, 32), A64(s, AddReg(X0, X0, X0)), A64LoadSlot(s, SLOT_C_LEAF);
  A64(s, 0xD61F0000u | X16 << 5); /* br x16 */
  End(s);

  Begin(s, BLOB_MOVED, "jit_moved", SLOT_MOVED);
  L(s, 35), A64(s, Movz(X1, 0));
  A64CountLoop(s, 36, 37, AddImm(X1, X1, 5));
  L(s, 38), A64(s, MovReg(X0, X1)), A64(s, kRet);
  End(s);

  Begin(s, BLOB_REUSE_V1, "jit_reuse_v1", SLOT_REUSE_V1);
  L(s, 41), A64(s, AddImm(X0, X0, 1)), A64(s, kRet);
  End(s);

  Begin(s, BLOB_REUSE_V2, "jit_reuse_v2", SLOT_REUSE_V2);
  L(s, 44), A64(s, AddReg(X0, X0, X0)), A64(s, AddImm(X0, X0, 7)), A64(s, kRet);
  End(s);
  (void)LR, (void)SP, (void)XZR, (void)FP;
}

void cgjit_emit(enum cgjit_arch arch, struct cgjit_prog *prog) {
  memset(prog, 0, sizeof *prog);
  struct asm_state s = {prog, BLOB_MAIN, 0};
  if (arch == CGJIT_X86_64)
    EmitX86(&s);
  else
    EmitA64(&s);
}
