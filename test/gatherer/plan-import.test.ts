/**
 * Importing plans into the gatherer's queues (gatherer/plan-import.ts): URLs
 * reach their hosts' queues in plan order with their hints, a damaged plan is
 * set aside whole, and an import killed at any push (a real child process,
 * test/helpers/gather-crash-child.ts) resumes so that every URL is queued
 * exactly once.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import test from 'node:test';
import { inboxDir, writePlan, type PlanEntry } from '../../common/gather/plan-file.js';
import { GatherQueue, MAX_REST_LENGTH } from '../../common/gather/queue-file.js';
import { urlParts } from '../../common/url.js';
import { importPlans, type ImportReport } from '../../gatherer/plan-import.js';
import { decodeQueued, encodeQueued, type QueuedUrl } from '../../gatherer/queue-entry.js';
import { repoRoot, scratchDir } from '../helpers/paths.js';
import { withQueue } from '../helpers/queue-entries.js';

const crashChild = join(repoRoot, 'dist', 'test', 'helpers', 'gather-crash-child.js');

interface Seen {
  url: string;
  priority: number;
  seq: number;
  queued: QueuedUrl;
}

/** Every queued entry of every host, by host, as URLs with their decoded hints. */
function queued(state: string): Map<string, Seen[]> {
  return withQueue(state, (queue) => {
    const out = new Map<string, Seen[]>();
    for (const host of queue.hosts()) {
      const port = host.port === (host.scheme === 'https' ? 443 : 80) ? '' : `:${host.port}`;
      const site = `${host.scheme}://${host.name}${port}`;
      const entries = [...queue.entries(host)].map((e) => {
        const q = decodeQueued(e.rest);
        return { url: site + q.rest, priority: e.priority, seq: e.seq, queued: q };
      });
      if (entries.length > 0) out.set(site, entries);
    }
    return out;
  });
}

/** What the queues must hold after importing these plans in order: per site, each URL once, in order. */
function expected(...plans: PlanEntry[][]): Map<string, Array<{ url: string; priority: number; queued: QueuedUrl }>> {
  const out = new Map<string, Array<{ url: string; priority: number; queued: QueuedUrl }>>();
  for (const entry of plans.flat()) {
    const parts = urlParts(entry.url);
    if (Buffer.byteLength(parts.rest) > MAX_REST_LENGTH) continue;
    const q: QueuedUrl = { rest: parts.rest, retries: 0 };
    if (entry.ifModifiedSince !== undefined) q.ifModifiedSince = entry.ifModifiedSince;
    if (entry.ifNoneMatch !== undefined) q.ifNoneMatch = entry.ifNoneMatch;
    const list = out.get(parts.site) ?? [];
    list.push({ url: entry.url, priority: entry.priority, queued: q });
    out.set(parts.site, list);
  }
  return out;
}

function assertQueued(state: string, want: ReturnType<typeof expected>): void {
  const got = queued(state);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), 'hosts with queued URLs');
  for (const [site, list] of want) {
    const entries = got.get(site)!;
    assert.deepEqual(
      entries.map(({ url, priority, queued: q }) => ({ url, priority, queued: q })),
      list,
      `queue of ${site}`,
    );
    // Seqs run on without a gap: nothing pushed and lost, nothing pushed twice.
    entries.forEach((e, i) => assert.equal(e.seq, entries[0]!.seq + i));
  }
}

/** The inbox holds nothing but these names (no plan, journal or temporary file left). */
function assertInbox(state: string, names: string[] = []): void {
  const dir = inboxDir(state);
  assert.deepEqual(existsSync(dir) ? readdirSync(dir).sort() : [], [...names].sort(), 'inbox contents');
}

const FIRST: PlanEntry[] = [
  { url: 'http://a.example/old/1', priority: 5 },
  { url: 'http://[::1]:8080/old', priority: 6 },
  { url: 'http://a.example/old/2', priority: 7 },
];

/** 14 URLs over four hosts, interleaved, two already known from FIRST. */
const SECOND: PlanEntry[] = [
  { url: 'http://a.example/1', priority: 100 },
  { url: 'https://b.example:8443/1?q=1', priority: 0, ifModifiedSince: 'Tue, 15 Nov 1994 08:12:31 GMT' },
  { url: 'http://a.example/2', priority: 4294967295, ifNoneMatch: '"abc"' },
  { url: 'http://[::1]:8080/1', priority: 3 },
  { url: 'http://c.example/%C3%A9', priority: 9, ifNoneMatch: 'W/"x y"', ifModifiedSince: 'yesterday' },
  { url: 'http://a.example/3', priority: 100 },
  { url: 'https://b.example:8443/2', priority: 1 },
  { url: 'http://a.example/2', priority: 50 },
  { url: 'http://[::1]:8080/2', priority: 3 },
  { url: 'http://c.example/2', priority: 9 },
  { url: 'https://b.example:8443/3', priority: 2 },
  { url: 'http://a.example/4', priority: 100 },
  { url: 'http://c.example/3', priority: 9 },
  { url: 'http://a.example/5', priority: 100 },
];

test('URLs land in their hosts\' queues in plan order, with priorities and hints', async (t) => {
  const state = scratchDir(t);
  writePlan(state, FIRST);
  writePlan(state, SECOND);
  const report = await imported(state);
  assert.equal(report.plans, 2);
  assert.equal(report.urls, FIRST.length + SECOND.length);
  assert.equal(report.refused, 0);
  assert.deepEqual(report.hosts.map((h) => `${h.scheme} ${h.name} ${h.port}`).sort(), ['http [::1] 8080', 'http a.example 80', 'http c.example 80', 'https b.example 8443']);
  assertQueued(state, expected(FIRST, SECOND));
  assertInbox(state);
  // The entries' hints, spelled out once.
  const b = queued(state).get('https://b.example:8443')!;
  assert.deepEqual(b[0]!.queued, { rest: '/1?q=1', retries: 0, ifModifiedSince: 'Tue, 15 Nov 1994 08:12:31 GMT' });
  const c = queued(state).get('http://c.example')!;
  assert.deepEqual(c[0]!.queued, { rest: '/%C3%A9', retries: 0, ifNoneMatch: 'W/"x y"', ifModifiedSince: 'yesterday' });
});

test('an empty inbox imports nothing', async (t) => {
  const state = scratchDir(t);
  const report = await imported(state);
  assert.deepEqual(report, { plans: 0, urls: 0, refused: 0, hosts: [] });
});

test('a URL too long for a queue entry is refused and counted; the rest of the plan goes in', async (t) => {
  const state = scratchDir(t);
  const long = `http://a.example/${'x'.repeat(MAX_REST_LENGTH)}`;
  const plan = [
    { url: 'http://a.example/1', priority: 1 },
    { url: long, priority: 1 },
    { url: 'http://a.example/2', priority: 1 },
  ];
  writePlan(state, plan);
  const report = await imported(state);
  assert.equal(report.urls, 2);
  assert.equal(report.refused, 1);
  assertQueued(state, expected(plan));
  assertInbox(state);
});

test('a damaged plan is renamed .bad and nothing of it imported, while the plans around it are', async (t) => {
  const state = scratchDir(t);
  writePlan(state, [{ url: 'http://a.example/before', priority: 1 }]);
  const damaged = writePlan(state, [
    { url: 'http://a.example/damaged-1', priority: 1 },
    { url: 'http://bad.example/damaged-2', priority: 1 },
  ]);
  const cut = writePlan(state, [{ url: 'http://cut.example/x', priority: 1 }]);
  writePlan(state, [{ url: 'http://a.example/after', priority: 2 }]);
  const bytes = readFileSync(damaged);
  bytes[bytes.indexOf('damaged-2')] ^= 0x20; // a letter's case: still UTF-8, but the CRC fails
  writeFileSync(damaged, bytes);
  const cutBytes = readFileSync(cut);
  writeFileSync(cut, cutBytes.subarray(0, cutBytes.length - 5));

  const report = await imported(state);
  assert.equal(report.plans, 2);
  assert.equal(report.urls, 2);
  assertQueued(state, expected([{ url: 'http://a.example/before', priority: 1 }], [{ url: 'http://a.example/after', priority: 2 }]));
  assertInbox(state, [`${basename(damaged)}.bad`, `${basename(cut)}.bad`]);
  assert.deepEqual(readFileSync(`${damaged}.bad`), bytes, 'kept as it was for the operator');
  withQueue(state, (queue) => {
    assert.equal(queue.find('http', 80, 'bad.example'), undefined, 'no host created for a refused plan');
    assert.equal(queue.find('http', 80, 'cut.example'), undefined);
  });
  // A second run finds nothing more to do.
  assert.equal((await imported(state)).plans, 0);
});

/** A state holding FIRST imported, SECOND waiting in the inbox; returns SECOND's path. */
async function prepared(state: string, second: PlanEntry[] = SECOND): Promise<string> {
  writePlan(state, FIRST);
  await imported(state);
  return writePlan(state, second);
}

/** importPlans with the state's queue open, closed once the import has settled. */
async function imported(state: string): Promise<ImportReport> {
  const queue = GatherQueue.open(state);
  try {
    return await importPlans(state, queue);
  } finally {
    queue.close();
  }
}

/** Runs importPlans in a child killed at `at` (see gather-crash-child.ts). */
function killedImport(state: string, at: string): void {
  const child = spawnSync(process.execPath, [crashChild, 'import', state, at], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', `the import child was not killed at ${at} (status ${child.status}): ${child.stderr}`);
}

function journalOf(state: string): { plan: string; before: Record<string, number> } {
  return JSON.parse(readFileSync(join(inboxDir(state), 'importing'), 'utf8')) as { plan: string; before: Record<string, number> };
}

for (const at of ['push:0', 'push:1', 'push:2', 'push:7', `push:${SECOND.length - 1}`, 'sync']) {
  test(`an import killed at ${at} resumes: every URL queued exactly once, journal and plan gone`, async (t) => {
    const state = scratchDir(t);
    const plan = await prepared(state);
    killedImport(state, at);
    // What the crash left: the journal naming the plan, with each host's pushes before the import.
    const journal = journalOf(state);
    assert.equal(journal.plan, basename(plan));
    assert.deepEqual(journal.before, { 'http://a.example:80': 2, 'https://b.example:8443': 0, 'http://[::1]:8080': 1, 'http://c.example:80': 0 });
    assert.ok(existsSync(plan));

    const report = await imported(state);
    assert.equal(report.plans, 1);
    assertQueued(state, expected(FIRST, SECOND));
    assertInbox(state);
  });
}

test('an entry the gatherer queues while the journal is being written is counted: the journal is written again before the first push', async (t) => {
  const state = scratchDir(t);
  await prepared(state);
  const queue = GatherQueue.open(state);
  let journalAtFirstPush: ReturnType<typeof journalOf> | undefined;
  const push = queue.push.bind(queue);
  let importing: Promise<ImportReport>;
  try {
    importing = importPlans(state, queue);
    // The journal's fsyncs are under way: a retry goes into a.example's queue, as the gatherer may do.
    push(queue.find('http', 80, 'a.example')!, encodeQueued({ rest: '/retry', retries: 0 }), 8);
    queue.push = (...args) => {
      journalAtFirstPush ??= journalOf(state);
      return push(...args);
    };
    await importing;
  } finally {
    queue.close();
  }
  assert.equal(journalAtFirstPush?.before['http://a.example:80'], 3, 'the retry counted as pushed before the plan');
  assertQueued(state, expected(FIRST, [{ url: 'http://a.example/retry', priority: 8 }], SECOND));
  assertInbox(state);
});

test('an import killed twice, the second time while resuming, still queues every URL exactly once', async (t) => {
  const state = scratchDir(t);
  await prepared(state);
  killedImport(state, 'push:4');
  killedImport(state, 'push:3');
  killedImport(state, 'push:0');
  await imported(state);
  assertQueued(state, expected(FIRST, SECOND));
  assertInbox(state);
});

test('a plan arriving after a killed import is imported whole after the resumed one', async (t) => {
  const state = scratchDir(t);
  await prepared(state);
  killedImport(state, 'push:6');
  const third: PlanEntry[] = [
    { url: 'http://a.example/third', priority: 1 },
    { url: 'http://d.example/third', priority: 1 },
  ];
  writePlan(state, third);
  const report = await imported(state);
  assert.equal(report.plans, 2);
  assertQueued(state, expected(FIRST, SECOND, third));
  assertInbox(state);
});

test('a journal left by a crash after its plan was removed is stale: dropped, and no other plan skips lines for it', async (t) => {
  const state = scratchDir(t);
  await prepared(state, []);
  await imported(state);
  // As if the crash came between removing the plan and removing the journal.
  writeFileSync(join(inboxDir(state), 'importing'), JSON.stringify({ plan: '000000000000001-1-000000.plan', before: { 'http://a.example:80': 0 } }));
  writePlan(state, SECOND);
  const report = await imported(state);
  assert.equal(report.plans, 1);
  assert.equal(report.urls, SECOND.length);
  assertQueued(state, expected(FIRST, SECOND));
  assertInbox(state);
});

test(
  'an import killed after a URL too long for the queue resumes without queueing a URL twice',
  async (t) => {
    const state = scratchDir(t);
    const plan: PlanEntry[] = [
      { url: 'http://a.example/1', priority: 1 },
      { url: `http://a.example/${'x'.repeat(MAX_REST_LENGTH)}`, priority: 1 },
      { url: 'http://a.example/2', priority: 1 },
      { url: 'http://a.example/3', priority: 1 },
    ];
    await prepared(state, plan);
    killedImport(state, 'sync');
    const report = await imported(state);
    assert.equal(report.plans, 1);
    assertQueued(state, expected(FIRST, plan));
    assertInbox(state);
  },
);
