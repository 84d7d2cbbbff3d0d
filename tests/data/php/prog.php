<?php
// cg-inject's PHP capture: a function, a method and top-level code, each hot enough for
// opcache's JIT (tracing and function mode).
class Calc {
    public function fib(int $n): int {
        return $n < 2 ? $n : $this->fib($n - 1) + $this->fib($n - 2);
    }
}

function fib(int $n): int {
    return $n < 2 ? $n : fib($n - 1) + fib($n - 2);
}

$sum = 0;
for ($i = 0; $i < 20000; $i++) {
    $sum += $i % 7;
}
$c = new Calc();
echo fib(18), " ", $c->fib(16), " ", $sum, "\n";
