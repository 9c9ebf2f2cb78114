/**
 * Dependencies point one way (STYLE 2): common/ imports nothing of ours, and the
 * four parts import common/ but never each other or the CLI. Parts meet only in
 * files on disk whose formats live in common/.
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

test('the import scanner sees static, re-export and dynamic imports', () => {
  // Guards the guard: a scanner that saw nothing would pass every test above.
  const text = "import a from '../x/a.js';\nexport { b } from './y/b.js';\nconst c = await import('../z/c.js');\nimport './side.js';\n";
  assert.deepEqual(specifiers(text), ['../x/a.js', './y/b.js', '../z/c.js', './side.js']);
  assert.ok(edges().some((e) => e.from === 'gatherer' && e.to === 'common'), 'gatherer/ → common/ edge not seen');
});
