// BT, BTS, BTR and BTC on register operands (16, 32 and 64 bits), run with RSP at the top of a
// buffer whose bytes just below RSP are live data, the way BEAMJIT runs Erlang code with RSP on a
// process's stack and the process's heap right below it. Prints every instruction's result (the
// register and CF) for a set of values and bit numbers, so that a run under Valgrind can be
// compared with the hardware's, and whether the bytes below RSP kept their value. Valgrind 3.19
// stores a register operand at RSP-288 to test its bit there (patch 0011 removes that).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned char below_sp[4096] __attribute__((aligned(16)));

// One instruction with RSP = the end of below_sp; returns the register, *cf the carry flag.
#define BIT_OP(NAME, INSN)                                                \
  static uint64_t NAME(uint64_t value, uint64_t bit, uint64_t* cf) {     \
    uint64_t carry;                                                       \
    __asm__ volatile("mov %%rsp, %%r8\n\t"                                \
                     "mov %[top], %%rsp\n\t" INSN                         \
                     "\n\t"                                               \
                     "setc %%dl\n\t"                                      \
                     "movzbq %%dl, %%rdx\n\t"                             \
                     "mov %%r8, %%rsp"                                    \
                     : "+a"(value), "=&d"(carry)                          \
                     : "c"(bit), [top] "r"(below_sp + sizeof below_sp)    \
                     : "r8", "cc", "memory");                             \
    *cf = carry;                                                          \
    return value;                                                         \
  }
BIT_OP(bt64, "bt %%rcx, %%rax")
BIT_OP(bts64, "bts %%rcx, %%rax")
BIT_OP(btr64, "btr %%rcx, %%rax")
BIT_OP(btc64, "btc %%rcx, %%rax")
BIT_OP(bt32, "bt %%ecx, %%eax")
BIT_OP(bts32, "bts %%ecx, %%eax")
BIT_OP(btr32, "btr %%ecx, %%eax")
BIT_OP(btc32, "btc %%ecx, %%eax")
BIT_OP(bt16, "bt %%cx, %%ax")
BIT_OP(bts16, "bts %%cx, %%ax")
BIT_OP(btr16, "btr %%cx, %%ax")
BIT_OP(btc16, "btc %%cx, %%ax")

typedef uint64_t (*BitOp)(uint64_t, uint64_t, uint64_t*);

int main(void) {
  static const struct {
    const char* name;
    BitOp op;
  } ops[] = {{"bt64", bt64},   {"bts64", bts64}, {"btr64", btr64}, {"btc64", btc64},
             {"bt32", bt32},   {"bts32", bts32}, {"btr32", btr32}, {"btc32", btc32},
             {"bt16", bt16},   {"bts16", bts16}, {"btr16", btr16}, {"btc16", btc16}};
  // 0xffffffffffff8032: the node bitmap BEAM's map lookup tested when it broke a heap word.
  static const uint64_t values[] = {0, 0xffffffffffff8032ull, 0x8000000000000001ull,
                                    0x00000000a5a5a5a5ull, 0x1234567890abcdefull};
  static const uint64_t bits[] = {0, 1, 5, 15, 16, 31, 32, 63, 64, 100};
  int clobbered = 0;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
    for (size_t v = 0; v < sizeof values / sizeof values[0]; ++v) {
      for (size_t b = 0; b < sizeof bits / sizeof bits[0]; ++b) {
        memset(below_sp, 0x5a, sizeof below_sp);
        uint64_t cf = 0;
        uint64_t out = ops[o].op(values[v], bits[b], &cf);
        printf("%s %#llx %llu -> %#llx cf=%llu\n", ops[o].name, (unsigned long long)values[v],
               (unsigned long long)bits[b], (unsigned long long)out, (unsigned long long)cf);
        for (size_t i = 0; i < sizeof below_sp; ++i) {
          if (below_sp[i] != 0x5a) {
            printf("  %s changed the byte at RSP-%zu\n", ops[o].name, sizeof below_sp - i);
            ++clobbered;
            break;
          }
        }
      }
    }
  }
  printf("%s\n", clobbered ? "the bytes below RSP changed" : "the bytes below RSP kept their value");
  return clobbered ? 1 : 0;
}
