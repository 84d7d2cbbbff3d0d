// The truth check's Mono program (README.md): Main -> A -> B -> Leaf, each with one caller;
// Main -> Rec (recursion); Main -> Invoke -> Cb (a callback through a delegate). `mono chain.exe N`;
// without N, Main returns at once (the baseline: the runtime's start-up and exit only).
// NoInlining keeps each call a call: the JIT would otherwise fold the small methods into their
// callers.
using System;
using System.Runtime.CompilerServices;

public static class Chain {
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long Leaf(long i) {
    long x = i;
    for (int k = 0; k < 20; k++) x = (x * 31 + k) % 1000003;
    return x;
  }
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long B(long i) { return Leaf(i) + 1; }
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long A(long i) { return B(i) + 1; }
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long Rec(int n) { return n <= 1 ? 1 : Rec(n - 1) + (n % 7); }
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long Cb(long v) { return (v * 17) % 101; }
  [MethodImpl(MethodImplOptions.NoInlining)]
  static long Invoke(Func<long, long> f, long v) { return f(v) + 1; }

  public static void Main(string[] args) {
    if (args.Length == 0) return;
    int n = int.Parse(args[0]);
    long s = 0;
    for (int i = 0; i < n; i++) s += A(i);
    for (int i = 0; i < n / 100; i++) s += Rec(60);
    Func<long, long> f = Cb;
    for (int i = 0; i < n; i++) s += Invoke(f, i);
    Console.WriteLine(s);
  }
}
