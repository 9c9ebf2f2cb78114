/**
 * Dependencies point one way (STYLE 2): common/ imports nothing of ours, and the
 * parts import common/ but never each other or the CLI. Parts meet only in
 * files on disk whose formats live in common/; the one exception is the
 * exporter's read-only use of the shepherd's URL database readers
 * (docs/decisions.md, "The exporter, a part of its own"). Inside a folder too, no two
 * files import each other, directly or around a loop (type imports count:
 * a loop of types is a loop a reader has to untangle).
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';
import { repoRoot } from './helpers/paths.js';

const PARTS = ['gatherer', 'shepherd', 'indexer', 'searcher', 'exporter'];
/** What the exporter may take from the shepherd: the read-only URL snapshot, how a bucket reads as a fetch result, and the row types (values: the state names only). */
const EXPORTER_READS = new Map([
  ['shepherd/status.ts', null],
  ['shepherd/results.ts', null],
  ['shepherd/urldb.ts', new Set(['URL_STATES'])],
]);
const OURS = ['common', ...PARTS, 'client', 'cli', 'test', 'bench'];
/** What client/ may name, by `import type` only: it runs in browsers as tsc emits it, so nothing may remain imported at run time. */
const CLIENT_TYPES = new Set(['searcher/protocol.ts', 'searcher/engine.ts']);

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

/** The import statements of a file with what they import from each file of ours: names imported as values (not `type`), or null for a whole-module or side-effect import. */
function importStatements(file: string): Array<{ to: string; values: string[] | null }> {
  const text = readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(/^import\s+(type\s+)?([^'"]*?)\s*from\s*['"](\.[^'"]+)['"]/gms)) {
    const to = relative(repoRoot, resolve(dirname(file), m[3]!)).replace(/\.js$/, '.ts');
    if (m[1] !== undefined) {
      out.push({ to, values: [] });
      continue;
    }
    const named = /^\{([^}]*)\}$/.exec(m[2]!.trim());
    const values = named === null ? null : named[1]!.split(',').map((n) => n.trim()).filter((n) => n !== '' && !n.startsWith('type '));
    out.push({ to, values });
  }
  return out;
}

/** An exporter file's import of the shepherd that the rule allows. */
function exporterMayRead(to: string, values: string[] | null): boolean {
  if (!EXPORTER_READS.has(to)) return false;
  const allowed = EXPORTER_READS.get(to)!;
  return allowed === null || (values !== null && values.every((name) => allowed.has(name)));
}

test('common/ imports nothing outside common/', () => {
  const bad = edges().filter((e) => e.from === 'common' && e.to !== 'common');
  assert.deepEqual(bad, []);
});

test('no part imports another part or the CLI, but for the exporter reading the shepherd\'s URL database', () => {
  const bad = edges().filter((e) => PARTS.includes(e.from) && e.to !== e.from && e.to !== 'common' && !(e.from === 'exporter' && e.to === 'shepherd'));
  assert.deepEqual(bad, []);
  const exporterReads = sources(join(repoRoot, 'exporter')).flatMap((file) =>
    importStatements(file)
      .filter((i) => i.to.startsWith('shepherd/') && !exporterMayRead(i.to, i.values))
      .map((i) => ({ file: relative(repoRoot, file), ...i })),
  );
  assert.deepEqual(exporterReads, []);
});

test('the exporter rule refuses the shepherd\'s writers and values beyond the state names', () => {
  assert.ok(exporterMayRead('shepherd/status.ts', ['UrlSnapshot']));
  assert.ok(exporterMayRead('shepherd/urldb.ts', ['URL_STATES']));
  assert.ok(exporterMayRead('shepherd/urldb.ts', []));
  assert.ok(!exporterMayRead('shepherd/urldb.ts', ['UrlDb']));
  assert.ok(!exporterMayRead('shepherd/urldb.ts', null));
  assert.ok(!exporterMayRead('shepherd/shepherd.ts', []));
  assert.ok(importStatements(join(repoRoot, 'exporter/nutch/crawldb.ts')).some((i) => i.to === 'shepherd/urldb.ts' && i.values?.join() === 'URL_STATES'), 'crawldb.ts import of URL_STATES not seen');
});

test('client/ imports nothing at run time: only types, from the searcher\'s protocol and engine', () => {
  const files = sources(join(repoRoot, 'client'));
  assert.ok(files.length > 0);
  for (const file of files) {
    const statements = importStatements(file);
    assert.equal(statements.length, specifiers(readFileSync(file, 'utf8')).length, `${file}: every import is a plain import statement`);
    for (const { to, values } of statements) assert.ok(values !== null && values.length === 0 && CLIENT_TYPES.has(to), `${relative(repoRoot, file)} imports ${to} at run time or from outside ${[...CLIENT_TYPES].join(', ')}`);
    const emitted = readFileSync(join(repoRoot, 'dist', relative(repoRoot, file)).replace(/\.ts$/, '.js'), 'utf8');
    assert.deepEqual(specifiers(emitted.replace(/\/\*[\s\S]*?\*\//g, '')), [], `${file}: the emitted JS imports nothing`);
  }
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
