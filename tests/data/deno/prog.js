// cg-inject's Deno and Bun workload (tests/data/deno, tests/data/bun): a recursive fib, a loop
// that V8 enters by on-stack replacement, two methods both named `area`, and an arrow function.
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
function sumTo(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 7;
  return s;
}
const square = { area(x) { return x * x; } };
const cube = { area(x) { return x * x * x; } };
function main() {
  let total = 0;
  for (let round = 0; round < 40; round++) {
    total += fib(20) + sumTo(20000);
    for (let i = 0; i < 2000; i++) total += cube.area(i % 5) - square.area(i % 9);
  }
  return total + [1, 2, 3].map((x) => x * 2).length;
}
console.log(main());
