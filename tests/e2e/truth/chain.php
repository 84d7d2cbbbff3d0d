<?php
// The truth check's PHP program (README.md): main -> a -> b -> leaf, each with one caller;
// main -> rec (recursion); main -> invoke -> cb (a callback through a variable); and
// main -> array_map -> mapped (a callback from C code: array_map runs it in a nested
// execute_ex). `php chain.php N`; without N, main returns at once (the baseline: the runtime's
// start-up and exit only).
function leaf($i) {
  $x = $i;
  for ($k = 0; $k < 20; $k++) $x = ($x * 31 + $k) % 1000003;
  return $x;
}
function b($i) { return leaf($i) + 1; }
function a($i) { return b($i) + 1; }
function rec($n) { return $n <= 1 ? 1 : rec($n - 1) + ($n % 7); }
function cb($v) { return ($v * 17) % 101; }
function invoke($f, $v) { return $f($v) + 1; }
function mapped($v) { return leaf($v) % 13; }
function main($args) {
  if (count($args) === 0) return;
  $n = (int)$args[0];
  $s = 0;
  for ($i = 0; $i < $n; $i++) $s += a($i);
  for ($i = 0; $i < intdiv($n, 100); $i++) $s += rec(60);
  for ($i = 0; $i < $n; $i++) $s += invoke('cb', $i);
  $s += array_sum(array_map('mapped', range(0, intdiv($n, 10))));
  echo $s, "\n";
}
main(array_slice($argv, 1));
