/**
 * The bare undici loop (bench/peers/undici-loop.ts) and its `--prepare`
 * variant, sherlock's processor floor: both crawl the same loopback pages,
 * and the floor puts every response through the parse worker's step and
 * parses every 200 HTML page.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startFixture } from '../helpers/http-fixtures.js';
import { repoRoot, scratchDir } from '../helpers/paths.js';

const run = promisify(execFile);
const LOOP = join(repoRoot, 'dist', 'bench', 'peers', 'undici-loop.js');

const html = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);

test('the floor crawls what the bare loop crawls and prepares every response it gets', async (t) => {
  const site = await startFixture({
    address: '127.0.0.180',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n'),
      '/index.html': html('<title>home</title><p>Übersicht <a href="a.html">a</a> <a href="b.html">b</a> <a href="/private/x.html">x</a> <a href="gone.html">gone</a>'),
      '/a.html': html('<title>a</title><p>first page, back <a href="index.html">home</a>'),
      '/b.html': html('<title>b</title><p>second page'),
    },
  });
  t.after(() => site.close());
  const dir = scratchDir(t);
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/index.html\n`);

  const bare = JSON.parse((await run(process.execPath, [LOOP, seeds], { cwd: dir })).stdout) as Record<string, number>;
  const floor = JSON.parse((await run(process.execPath, [LOOP, seeds, '--prepare'], { cwd: dir })).stdout) as Record<string, number>;

  // robots.txt, three pages, the 404; /private/ never asked.
  assert.deepEqual(bare, { pages: 3, requests: 5 });
  assert.deepEqual(floor, { pages: 3, requests: 5, prepared: 5, parsed: 3 });
  assert.ok(!site.requests.some((r) => r.path.startsWith('/private/')));
});

test('the loop refuses a flag it does not know', async (t) => {
  const dir = scratchDir(t);
  await assert.rejects(run(process.execPath, [LOOP, join(dir, 'seeds.txt'), '--parse']), (err: { code?: number; stderr?: string }) => err.code === 2 && /usage: undici-loop SEEDS_FILE \[--prepare\]/.test(err.stderr ?? ''));
});
