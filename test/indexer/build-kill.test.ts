/**
 * `sherlock index build` killed with SIGKILL in every stage (and at random
 * moments) must leave `state/index/current` naming a whole version that the
 * Manifest verifies, and the next build must succeed and clear what the
 * killed ones left.
 */

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { verifyIndexDir } from '../../common/index/manifest.js';
import { STAGES } from '../../indexer/build.js';
import { startCli, until } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from './site.js';

test('a build killed in any stage leaves current on a whole version, and the next build succeeds', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.0.72', bulk: 8 });
  const first = await buildCli(state);
  const index = join(state, 'index');
  const current = join(index, 'current');
  assert.equal(verifyIndexDir(current).version, first.report.version);

  // Kill as each stage begins and at a few moments chosen by time.
  const moments: { stage?: string; delay: number }[] = [...STAGES.map((stage) => ({ stage, delay: 0 })), { delay: 40 }, { delay: 150 }];
  let interrupted = 0;
  for (const moment of moments) {
    const build = startCli(t, ['index', 'build', '--state', state, '--set', 'indexer.memory_budget=64KiB']);
    if (moment.stage !== undefined) await until(`stage ${moment.stage}`, () => build.stderr.includes(`stage=${moment.stage}`) || build.child.exitCode !== null);
    await new Promise((resolve) => setTimeout(resolve, moment.delay));
    build.child.kill('SIGKILL');
    await build.exited;
    if (readdirSync(index).some((name) => name.endsWith('.tmp'))) interrupted += 1;
    // Whichever build made it current, it is whole.
    verifyIndexDir(current);
  }
  assert.ok(interrupted >= 3, `${interrupted} kills landed before a build published`);

  const last = await buildCli(state);
  assert.equal(verifyIndexDir(current).version, last.report.version);
  const names = readdirSync(index);
  assert.deepEqual(names.filter((name) => name.endsWith('.tmp') || name === 'build.lock'), [], 'the next build clears what killed builds left');
  for (const name of names.filter((n) => /^\d{14}/.test(n))) verifyIndexDir(join(index, name));
});
