// A tiny workload for Node 20 under Callgrind: hot enough that V8 compiles fib (Sparkplug, then
// Maglev/TurboFan), small enough to run in seconds under Valgrind.
'use strict';
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
function sumTo(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 7;
  return s;
}
let total = 0;
for (let round = 0; round < 40; round++) total += fib(20) + sumTo(20000);
console.log(total);
