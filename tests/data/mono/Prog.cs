// cg-inject's Mono capture: a static method, an instance method and Main.
using System;

namespace Probe {
  public class Calc {
    public static int Fib(int n) { return n < 2 ? n : Fib(n - 1) + Fib(n - 2); }

    public int Sum(int[] a) {
      int s = 0;
      foreach (int x in a) s += x;
      return s;
    }
  }

  public static class Program {
    public static void Main() {
      var a = new int[20000];
      for (int i = 0; i < a.Length; i++) a[i] = i % 13;
      Console.WriteLine(Calc.Fib(20) + " " + new Calc().Sum(a));
    }
  }
}
