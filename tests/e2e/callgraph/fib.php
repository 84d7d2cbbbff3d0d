<?php
function fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
function work() { $s = 0; for ($i = 0; $i < 300; $i++) { $s += fib(12); } return $s; }
echo work(), "\n";
