// The truth check's Node program (README.md): main -> a -> b -> leaf, each with one caller;
// main -> rec (recursion); main -> invoke -> cb (a callback). `node --allow-natives-syntax
// chain.js N`; N = 0 is the baseline: everything but main's work (the runtime's start-up and
// exit, and the preparation below).
//
// V8 names an interpreted function's frame Builtins_InterpreterEntryTrampoline, shared by every
// interpreted function, and moves a function between tiers on the stack (interpreter, baseline,
// optimized code entered by on-stack replacement), each its own frame. So that each function of
// the chain is one named frame from its first instruction, they are optimized before the work:
// two small calls of main give the type feedback, then V8's test hooks (%-functions) optimize
// them all; the sum starts as -0, a double, so that no small-integer overflow deoptimizes main
// halfway (the feedback of the small calls would otherwise say integer).
'use strict';
function leaf(i) {
  let x = i;
  for (let k = 0; k < 20; k++) x = (x * 31 + k) % 1000003;
  return x;
}
function b(i) { return leaf(i) + 1; }
function a(i) { return b(i) + 1; }
function rec(n) { return n <= 1 ? 1 : rec(n - 1) + (n % 7); }
function cb(v) { return (v * 17) % 101; }
function invoke(f, v) { return f(v) + 1; }
function main(args) {
  const n = Number(args[0]);
  let s = -0;
  for (let i = 0; i < n; i++) s += a(i);
  for (let i = 0; i < n / 100; i++) s += rec(60);
  for (let i = 0; i < n; i++) s += invoke(cb, i);
  return s;
}
const args = process.argv.slice(2);
if (args.length > 0) {
  const chain = [main, a, b, leaf, rec, invoke, cb];
  for (const f of chain) %PrepareFunctionForOptimization(f);
  main(['150']);
  main(['150']);
  for (const f of chain) %OptimizeFunctionOnNextCall(f);
  console.log(main(args) + 0);  // + 0: the sum of no terms is -0, which prints as -0
}
