# The truth check's Raku program (README.md): main -> a -> b -> leaf, each with one caller;
# main -> rec (recursion); main -> invoke -> cb (a callback through a variable). `raku chain.raku N`;
# without N, main returns at once (the baseline: the runtime's start-up and exit only). `is pure`-free plain subs with
# native ints, so MoarVM's JIT compiles them (MVM_JIT_PERF_MAP names them).
sub leaf(int $i --> int) {
    my int $x = $i;
    loop (my int $k = 0; $k < 20; $k++) { $x = ($x * 31 + $k) % 1000003 }
    $x
}
sub b(int $i --> int) { leaf($i) + 1 }
sub a(int $i --> int) { b($i) + 1 }
sub rec(int $n --> int) { $n <= 1 ?? 1 !! rec($n - 1) + ($n % 7) }
sub cb(int $v --> int) { ($v * 17) % 101 }
sub invoke(&f, int $v --> int) { f($v) + 1 }
sub main(@args) {
    return unless @args;
    my int $n = @args[0].Int;
    my int $s = 0;
    loop (my int $i = 0; $i < $n; $i++) { $s += a($i) }
    loop ($i = 0; $i < $n div 100; $i++) { $s += rec(60) }
    loop ($i = 0; $i < $n; $i++) { $s += invoke(&cb, $i) }
    say $s;
}
main(@*ARGS);
