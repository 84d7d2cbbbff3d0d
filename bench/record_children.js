// `cg-inject record`'s benchmark program (bench/run.sh): a parent and two child processes, each
// running a little JIT-compiled work, so that record injects three profiles and reads
// /usr/bin/node's symbols for each.
const { spawnSync } = require('child_process');
function work(n) {
  let s = 0;
  for (let i = 0; i < n; ++i) s = (s * 31 + i) % 1000003;
  return s;
}
if (process.argv[2] === 'child') {
  console.log('child', work(3e6));
} else {
  for (let c = 0; c < 2; ++c) spawnSync(process.execPath, [__filename, 'child'], { stdio: 'inherit' });
  console.log('parent', work(3e6));
}
