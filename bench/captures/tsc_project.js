// Writes a TypeScript project of N modules (default 60) into DIR, for bench/captures/tsc.sh:
//   node tsc_project.js DIR [N]
// Each module imports two earlier ones and has what a real code base has: interfaces, a generic
// class with methods and getters, an enum, a discriminated union and a switch over it, arrow
// functions, overloads and a namespace, so the compiler's checker, binder and emitter all run.
// The output is the same for the same N (no clock, no randomness), so captures compare.
'use strict';
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
const count = Number(process.argv[3] || 60);
if (!dir || !(count >= 2)) {
  console.error('usage: node tsc_project.js DIR [N>=2]');
  process.exit(2);
}
fs.mkdirSync(path.join(dir, 'src'), {recursive: true});

function moduleText(i) {
  const name = `M${i}`;
  const deps = i === 0 ? [] : [Math.floor(i / 2), i - 1].filter((d, k, a) => a.indexOf(d) === k);
  const lines = [];
  for (const d of deps) lines.push(`import { Store${d}, Kind${d}, make${d} } from './m${d}';`);
  lines.push(`
export enum Kind${i} { Alpha = ${i}, Beta, Gamma = 'g${i}', }

export interface Item${i} {
  readonly id: number;
  name: string;
  tags?: string[];
  kind: Kind${i};
}

export type Shape${i} =
  | { type: 'circle'; radius: number }
  | { type: 'rect'; width: number; height: number }
  | { type: 'poly'; points: Array<[number, number]> };

export function area${i}(s: Shape${i}): number {
  switch (s.type) {
    case 'circle': return Math.PI * s.radius * s.radius;
    case 'rect': return s.width * s.height;
    case 'poly': {
      let sum = 0;
      for (let k = 0; k < s.points.length; k++) {
        const [x1, y1] = s.points[k];
        const [x2, y2] = s.points[(k + 1) % s.points.length];
        sum += x1 * y2 - x2 * y1;
      }
      return Math.abs(sum) / 2;
    }
  }
}

export class Store${i}<T extends Item${i} = Item${i}> {
  private readonly items = new Map<number, T>();
  private listeners: Array<(item: T) => void> = [];

  add(item: T): this {
    this.items.set(item.id, item);
    this.listeners.forEach((l) => l(item));
    return this;
  }
  find(id: number): T | undefined;
  find(pred: (item: T) => boolean): T | undefined;
  find(arg: number | ((item: T) => boolean)): T | undefined {
    if (typeof arg === 'number') return this.items.get(arg);
    for (const item of this.items.values()) if (arg(item)) return item;
    return undefined;
  }
  map<U>(f: (item: T, index: number) => U): U[] {
    return [...this.items.values()].map(f);
  }
  on(listener: (item: T) => void): () => void {
    this.listeners.push(listener);
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }
  get size(): number { return this.items.size; }
  get names(): readonly string[] { return this.map((item) => item.name.toUpperCase()); }
}

export function make${i}(n: number): Store${i} {
  const store = new Store${i}();
  for (let k = 0; k < n; k++) {
    store.add({ id: k, name: \`item\${k}\`, tags: k % 2 ? ['odd'] : undefined,
                kind: k % 3 === 0 ? Kind${i}.Alpha : Kind${i}.Beta });
  }
  return store;
}

export namespace Util${i} {
  export const version = '${i}.0';
  export function pick<K extends keyof Item${i}>(item: Item${i}, key: K): Item${i}[K] {
    return item[key];
  }
  export function group<T, K extends string | number>(xs: T[], key: (x: T) => K): Record<K, T[]> {
    const out = {} as Record<K, T[]>;
    for (const x of xs) (out[key(x)] ??= []).push(x);
    return out;
  }
}
`);
  const body = deps.map((d) =>
      `  const s${d}: Store${d} = make${d}(${3 + (i % 5)});\n` +
      `  total += s${d}.size + s${d}.names.length + (s${d}.find(1)?.kind === Kind${d}.Alpha ? 1 : 0);`);
  lines.push(`export function run${i}(): number {
  let total = area${i}({ type: 'rect', width: ${i + 1}, height: 2 });
${body.join('\n')}
  const groups = Util${i}.group(make${i}(4).map((x) => x), (x) => x.kind);
  return total + Object.keys(groups).length;
}
`);
  return lines.join('\n');
}

for (let i = 0; i < count; i++) fs.writeFileSync(path.join(dir, 'src', `m${i}.ts`), moduleText(i));
const runs = [];
for (let i = 0; i < count; i++) runs.push(`import { run${i} } from './m${i}';`);
runs.push('', 'export const results: number[] = [');
for (let i = 0; i < count; i++) runs.push(`  run${i}(),`);
runs.push('];', '');
fs.writeFileSync(path.join(dir, 'src', 'index.ts'), runs.join('\n'));
fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
  compilerOptions: {
    target: 'ES2020', module: 'commonjs', strict: true, declaration: true, outDir: 'out',
    sourceMap: true,
  },
  include: ['src'],
}, null, 2) + '\n');
