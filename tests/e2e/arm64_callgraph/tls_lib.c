/* The shared library of tls.c: a __thread variable accessed from library code. Built with -fPIC
 * (run.sh), so each access goes through a TLS descriptor: AArch64's default dialect, and
 * -mtls-dialect=gnu2 on x86-64. The descriptor's function is the dynamic linker's
 * _dl_tlsdesc_return, which returns into the middle of the accessing function. */
#define KEEP __attribute__((noinline, noipa))
__thread long counter;

KEEP long lib_helper(long x) { return x * 3 + 1; }
KEEP long tls_bump(long x) {
  counter += x;
  return lib_helper(counter);
}
