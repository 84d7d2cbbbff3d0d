// A tiny Java workload for `cg-inject record` under Callgrind: hot enough that HotSpot's C1
// compiles fib (with -XX:TieredStopAtLevel=1), small enough to run in seconds under Valgrind.
public class Work {
  static int fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
  }

  public static void main(String[] args) {
    long total = 0;
    for (int round = 0; round < 40; round++) total += fib(20);
    System.out.println(total);
  }
}
