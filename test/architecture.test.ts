/**
 * Dependencies point one way (STYLE 2): common/ imports nothing of ours, and the
 * four parts import common/ but never each other or the CLI. Parts meet only in
 * files on disk whose formats live in common/. Inside a folder too, no two
 * files import each other, directly or around a loop (type imports count:
 * a loop of types is a loop a reader has to untangle).
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';
import { repoRoot } from './helpers/paths.js';

const PARTS = ['gatherer', 'shepherd', 'indexer', 'searcher'];
const OURS = ['common', ...PARTS, 'cli', 'test', 'bench'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

/** The files of ours a file imports (repository paths, `.ts`). */
function importedFiles(file: string): string[] {
  return specifiers(readFileSync(file, 'utf8'))
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(repoRoot, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'));
}

/** The import loops among `files`: each a list of files, the first imported again by the last (Tarjan's strongly connected components). */
function importLoops(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const loop: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      loop.push(member);
    } while (member !== file);
    if (loop.length > 1 || graph.get(file)!.includes(file)) loops.push(loop.reverse());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return loops;
}

/** The top-level folders a file imports from. */
function importedFolders(file: string): string[] {
  return specifiers(readFileSync(file, 'utf8'))
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(repoRoot, resolve(dirname(file), spec)).split(/[\\/]/)[0]!);
}

function edges(): Array<{ file: string; from: string; to: string }> {
  const out = [];
  for (const folder of ['common', ...PARTS]) {
    for (const file of sources(join(repoRoot, folder))) {
      for (const to of importedFolders(file)) out.push({ file: relative(repoRoot, file), from: folder, to });
    }
  }
  return out;
}

test('common/ imports nothing outside common/', () => {
  const bad = edges().filter((e) => e.from === 'common' && e.to !== 'common');
  assert.deepEqual(bad, []);
});

test('no part imports another part or the CLI', () => {
  const bad = edges().filter((e) => PARTS.includes(e.from) && e.to !== e.from && e.to !== 'common');
  assert.deepEqual(bad, []);
});

test('every relative import stays inside our own folders', () => {
  const bad = edges().filter((e) => !OURS.includes(e.to));
  assert.deepEqual(bad, []);
});

test('no import cycle between files, in any folder of ours', () => {
  const graph = new Map<string, string[]>();
  for (const folder of OURS) {
    for (const file of sources(join(repoRoot, folder))) graph.set(relative(repoRoot, file), importedFiles(file));
  }
  assert.deepEqual(importLoops(graph), []);
});

test('the loop finder finds a loop of three and a file importing itself, and nothing in a chain', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', ['e.ts']],
    ['e.ts', []],
    ['f.ts', ['f.ts']],
  ]);
  assert.deepEqual(importLoops(graph).map((loop) => [...loop].sort()), [['a.ts', 'b.ts', 'c.ts'], ['f.ts']]);
});

test('the import scanner sees static, re-export and dynamic imports', () => {
  // Guards the guard: a scanner that saw nothing would pass every test above.
  const text = "import a from '../x/a.js';\nexport { b } from './y/b.js';\nconst c = await import('../z/c.js');\nimport './side.js';\n";
  assert.deepEqual(specifiers(text), ['../x/a.js', './y/b.js', '../z/c.js', './side.js']);
  assert.ok(edges().some((e) => e.from === 'gatherer' && e.to === 'common'), 'gatherer/ → common/ edge not seen');
});
