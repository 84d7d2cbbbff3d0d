// A Mono method's own frame (issue 32 §1, tests/e2e/callgraph/stacks.sh): Main writes a line
// (Console's first use: Mono's JIT compiles Console's set-up through its trampolines, and the
// compiler re-enters itself), creates an object through a trampoline, then runs a 3,000,000-step
// loop in Main itself and writes the result. Main's inclusive cost must hold its loop.
using System;
using System.Runtime.CompilerServices;

class Box {
  public long V;
  [MethodImpl(MethodImplOptions.NoInlining)]
  public Box(long x) { V = x * 3; }
}

static class MainLoop {
  static void Main() {
    Console.WriteLine("start");
    Box b = new Box(7);
    long acc = b.V;
    for (int i = 0; i < 3000000; i++) {
      acc = acc * 31 + i;
      acc ^= acc >> 7;
    }
    Console.WriteLine(acc);
  }
}
