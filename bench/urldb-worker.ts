/**
 * sherlock's side of the URL-database table: the workload of
 * urldb-workload.ts run against the shepherd's own database code
 * (dist/shepherd/urldb.js, default [shepherd] settings), one process, one
 * JSON line on stdout:
 *
 *   node dist/bench/urldb-worker.js STATE_DIR COUNT SITES
 *     → {"urls":…,"added":…,"inject":{"wallMs":…,"cpuMs":…},"plan":…,"merge":…,"planned":…}
 *
 * Only the calls into UrlDb are timed, not the generator: the inject is one
 * injectAll over the batches (its worker thread prepares the next batch while
 * the current one is inserted), less the time spent making the batches. The harness
 * measures peak RSS around the whole process with GNU time.
 */

import { UrlDb, type FetchOutcome, type InjectBatch, type InjectEntry } from '../shepherd/urldb.js';
import { INJECT_BATCH, PLAN_PER_SITE, PLAN_SIZE, START, fetchCode, noTime, syntheticUrlBatches, timed } from './urldb-workload.js';

const [state, countArg, sitesArg] = process.argv.slice(2);
const count = Number(countArg);
const sites = Number(sitesArg);
if (state === undefined || !(count > 0) || !(sites > 0)) {
  process.stderr.write('usage: urldb-worker STATE_DIR COUNT SITES\n');
  process.exit(2);
}

const inject = noTime();
const generate = noTime();
const plan = noTime();
const merge = noTime();
const db = UrlDb.open(state);
let now = START;
let depth = 0;

/** The synthetic batches, each a minute after the last; the time spent making them is kept apart. */
function* batches(): Generator<InjectBatch> {
  const source = syntheticUrlBatches({ count, sites }, INJECT_BATCH);
  for (;;) {
    // Depths 1–4, as links found on pages of a few levels.
    const entries = timed(generate, () => source.next().value?.map((url: string): InjectEntry => ({ url, depth: 1 + (depth++ % 4) })));
    if (entries === undefined) return;
    yield { entries, now };
    now += 60;
  }
}

// injectAll asks for the next batch while the worker thread is idle, so the
// generator's time is subtracted whole from the inject's.
const added = timed(inject, () => db.injectAll(batches())).added;
inject.wallMs -= generate.wallMs;
inject.cpuMs -= generate.cpuMs;

const due = timed(plan, () => db.due(now, PLAN_SIZE, PLAN_PER_SITE));
timed(plan, () => db.markQueued(due.map((d) => d.footprint), now));

const results = due.map((d, i): FetchOutcome => {
  const code = fetchCode(i);
  const r: FetchOutcome = { url: d.url, time: now + 1, code, status: code === 0 ? 200 : 404 };
  if (code === 0) {
    r.checksum = (i * 2654435761).toString(16).padStart(32, '0').slice(-32);
    r.etag = `"${i.toString(36)}"`;
    r.lastModified = START - i;
    r.oid = i + 1;
  } else if (code === 1) {
    r.redirect = d.url + '/';
  }
  return r;
});
timed(merge, () => db.recordResults(results, now + 2));
db.close();
process.stdout.write(JSON.stringify({ urls: count, added, planned: due.length, inject, plan, merge }) + '\n');
