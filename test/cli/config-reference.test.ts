/**
 * The configuration reference in docs/operating.md is the generated one
 * (`sherlock config reference`), so it cannot drift from the schemas; and the
 * generator refuses a key the shipped etc/sherlock.toml does not describe.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { committedReference, configReference } from '../../cli/config-reference.js';
import { isSherlockError } from '../../common/errors.js';
import { runCli } from '../helpers/cli.js';
import { repoRoot } from '../helpers/paths.js';

const shipped = readFileSync(join(repoRoot, 'etc', 'sherlock.toml'), 'utf8');

test('docs/operating.md holds exactly the generated config reference (regenerate: sherlock config reference --write docs/operating.md)', () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'operating.md'), 'utf8');
  assert.equal(committedReference(doc), configReference(shipped));
});

test('the reference lists every key with its schema default, keys under one comment sharing a row', () => {
  const reference = configReference(shipped);
  assert.match(reference, /^\| `rebuild_documents`<br>`rebuild_interval`<br>`poll_interval` \| `10000`<br>`"1h"`<br>`"10s"` \| The daemon \(sherlock indexer run\) builds/m);
  assert.match(reference, /^\| `min_delay` \| `"5s"` \| Minimum pause between two requests to the same IP address\. \|$/m);
  for (const table of ['log', 'gatherer', 'shepherd', 'indexer', 'searcher']) assert.match(reference, new RegExp(`^### \`\\[${table}\\]\`$`, 'm'));
});

test('a key the shipped file leaves out stops the generator, naming it', () => {
  const without = shipped.replace(/^min_delay = .*\n/m, '');
  assert.throws(() => configReference(without), (err) => isSherlockError(err, 'SHERLOCK_NOT_FOUND') && /gatherer\.min_delay/.test(err.message));
});

test('sherlock config reference prints the same reference', async () => {
  const run = await runCli(['config', 'reference']);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, configReference(shipped) + '\n');
});
