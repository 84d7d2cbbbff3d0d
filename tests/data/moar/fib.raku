# A small Raku workload for cg-inject's MoarVM capture: a recursive function and a loop that
# MoarVM's JIT compiles (MVM_JIT_PERF_MAP=1 MVM_JIT_DUMP_BYTECODE=1).
sub fib(Int $n --> Int) { $n < 2 ?? $n !! fib($n - 1) + fib($n - 2) }
my $s = 0;
for ^300 -> $i { $s += fib(10) + ($i * 3) % 7 }
say $s;
