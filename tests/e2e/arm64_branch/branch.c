/* Regression program for subprojects/valgrind-patches/0001-arm64-plain-B-is-not-a-call.patch.
   Built for AArch64 at -O0, so `if (n < 2) return n;` becomes a plain `b` to fib's epilogue.
   Valgrind 3.19 unpatched takes that `b` for a call: fib gains a phantom call per base case (89
   of fib(10)'s 177 calls are base cases). Patched, fib is entered exactly 177 times (1 from main,
   176 from itself). tail_to_leaf ends in a plain `b leaf`; Callgrind makes a jump to another
   named function's entry a call in any case, so that edge is the same with and without the patch
   (and on x86-64), and documents that rule. */
long fib(long n);
long leaf(long n);
long tail_to_leaf(long n);

__attribute__((noinline)) long fib(long n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) long leaf(long n) { return n * 3; }

/* A tail call that does not depend on the compiler's mood: add, then a plain B. */
__asm__(
    ".text\n"
    ".globl tail_to_leaf\n"
    ".type tail_to_leaf, %function\n"
    "tail_to_leaf:\n"
    "  add x0, x0, #1\n"
    "  b leaf\n"
    ".size tail_to_leaf, .-tail_to_leaf\n");

int main(void) {
  long r = fib(10) + leaf(1) + tail_to_leaf(2); /* 55 + 3 + 9 */
  return r == 67 ? 0 : 1;
}
