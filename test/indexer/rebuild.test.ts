/**
 * What the indexer daemon relies on: the backlog counts the buckets stored
 * since the current version (all of them before the first one, none right
 * after a build), and a build asked to stop gives up before its next stage
 * with SHERLOCK_ABORTED, leaving `current`, the versions and the lock as
 * they were.
 */

import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSherlockError } from '../../common/errors.js';
import { BacklogWatch } from '../../indexer/backlog.js';
import { buildIndex } from '../../indexer/build.js';
import { indexerConfig } from '../../indexer/config.js';
import { storedObjects } from '../helpers/gather-state.js';
import { scratchDir } from '../helpers/paths.js';
import { crawlSite } from './site.js';

test('the backlog is every bucket before the first version and none after it; a build asked to stop leaves current as it was', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.0.72' });
  const config = indexerConfig.parse({ workers: 1 });
  const watch = new BacklogWatch(state);
  const before = watch.look();
  assert.equal(before.version, undefined);
  assert.equal(before.buckets, storedObjects(state).length);

  const first = await buildIndex({ state, config });
  const after = watch.look();
  assert.deepEqual([after.version, after.buckets], [first.version, 0]);

  let asked = 0;
  await assert.rejects(
    buildIndex({ state, config, stopRequested: () => ++asked > 3 }),
    (err) => isSherlockError(err, 'SHERLOCK_ABORTED') && /before its links stage/.test(err.message),
  );
  assert.equal(readlinkSync(join(state, 'index', 'current')), first.version);
  assert.deepEqual(readdirSync(join(state, 'index')).sort(), [first.version, 'current']);
  // The lock went with the abandoned build: the next one runs.
  const next = await buildIndex({ state, config });
  assert.notEqual(next.version, first.version);
  assert.equal(watch.look().buckets, 0);
});
