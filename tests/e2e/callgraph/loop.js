// A loop calling a small function: no recursion, so every inclusive cost above 100% is a frame
// Callgrind did not pop (recursion through V8's builtins counts nested calls once per level).
function step(i) { return (i * 7 + 3) % 1013; }
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += step(i); return s; }
let s = 0;
for (let r = 0; r < 40; r++) s += work(5000);
console.log(s);
