// The truth check's Java program (README.md): main -> a -> b -> leaf, each with one caller;
// main -> rec (recursion); main -> invoke -> cb (a callback through a lambda). `java Chain N`;
// without N, main returns at once (the baseline: the runtime's start-up and exit only).
import java.util.function.LongUnaryOperator;

public class Chain {
  static long leaf(long i) {
    long x = i;
    for (int k = 0; k < 20; k++) x = (x * 31 + k) % 1000003;
    return x;
  }
  static long b(long i) { return leaf(i) + 1; }
  static long a(long i) { return b(i) + 1; }
  static long rec(int n) { return n <= 1 ? 1 : rec(n - 1) + (n % 7); }
  static long cb(long v) { return (v * 17) % 101; }
  static long invoke(LongUnaryOperator f, long v) { return f.applyAsLong(v) + 1; }

  public static void main(String[] args) {
    if (args.length == 0) return;
    int n = Integer.parseInt(args[0]);
    long s = 0;
    for (int i = 0; i < n; i++) s += a(i);
    for (int i = 0; i < n / 100; i++) s += rec(60);
    LongUnaryOperator f = Chain::cb;
    for (int i = 0; i < n; i++) s += invoke(f, i);
    System.out.println(s);
  }
}
