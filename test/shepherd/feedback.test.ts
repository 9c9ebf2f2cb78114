/**
 * The indexer's Feedback reaching the URL database: after a crawl and an
 * index build, one shepherd cycle gives the pages the static weights the
 * indexer computed and marks the copy of an exact duplicate `duplicate`, so
 * it is fetched again only max_refetch (default 30 days) after its last
 * fetch; the next cycle finds nothing more to apply, and a new index version
 * is applied again.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UrlDb, type UrlRecord } from '../../shepherd/urldb.js';
import { runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from '../indexer/site.js';

function rows(state: string, origin: string, paths: readonly string[]): Map<string, UrlRecord> {
  const db = UrlDb.open(state);
  try {
    return new Map(paths.map((path) => [path, db.get(origin + path)!]));
  } finally {
    db.close();
  }
}

async function cycle(state: string): Promise<{ feedback: number }> {
  const run = await runCli(['--set', 'log.level=info', 'shepherd', 'run', '--once', '--state', state]);
  assert.equal(run.status, 0, run.stderr);
  const applied = /index feedback applied.*records=(\d+)/.exec(run.stderr);
  return { feedback: applied === null ? 0 : Number(applied[1]) };
}

test('shepherd: the Feedback of the current index version sets weights and marks duplicates, once per version', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: '127.0.0.77' });
  const paths = ['/', '/popular', '/lonely', '/twin-a', '/twin-b'];
  const before = rows(state, origin, paths);
  for (const [path, row] of before) assert.equal(row.weight, 0, `${path} has no weight before any index`);

  const { report } = await buildCli(state);
  const first = await cycle(state);
  assert.equal(first.feedback, report.cards, 'one Feedback record per card');
  const after = rows(state, origin, paths);
  assert.ok(after.get('/popular')!.weight > after.get('/lonely')!.weight, 'the page linked from many pages weighs more');
  const twins = [after.get('/twin-a')!, after.get('/twin-b')!];
  assert.deepEqual(twins.map((row) => row.state).sort(), ['duplicate', 'ok'], 'one twin is the duplicate of the other');
  const copy = twins.find((row) => row.state === 'duplicate')!;
  assert.equal(copy.nextFetch, copy.lastFetch! + 30 * 86_400, 'a duplicate is fetched again only max_refetch after its last fetch');

  assert.equal((await cycle(state)).feedback, 0, 'a version is applied once');
  await buildCli(state);
  assert.equal((await cycle(state)).feedback, report.cards, 'a new version is applied again');
});
