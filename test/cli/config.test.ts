import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { loadConfig } from '../../common/config.js';
import { sherlockConfig } from '../../cli/settings.js';
import { cliPath, repoRoot, scratchDir } from '../helpers/paths.js';

const shipped = join(repoRoot, 'etc', 'sherlock.toml');

function sherlock(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'], ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('the shipped etc/sherlock.toml is valid, sets every key, and holds exactly the defaults', () => {
  const fromFile = loadConfig(sherlockConfig, { file: shipped, env: {} });
  const defaults = loadConfig(sherlockConfig, { env: { CONFIGURATION_DIRECTORY: '/nonexistent' } });
  assert.deepEqual(fromFile.config, defaults.config);
  const unset = [...fromFile.leaves].filter(([, { source }]) => source === 'default').map(([key]) => key);
  assert.deepEqual(unset, [], 'keys the shipped file does not document');
});

test('config check passes on the shipped file', () => {
  const run = sherlock(['config', 'check', '--config', shipped]);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, `config ok: ${shipped}\n`);
});

test('bad config: one line naming key, value and source, exit status 78', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'sherlock.toml');
  writeFileSync(file, '[gatherer]\nmax_connections = 8\nmin_delay = "soon"\n');
  const run = sherlock(['config', 'check', '--config', file]);
  assert.equal(run.status, 78);
  assert.equal(run.stdout, '');
  assert.equal(
    run.stderr,
    `sherlock: gatherer.min_delay: expected a duration like "2s", "500ms" or "1h30m", got "soon" (from ${file}:3)\n`,
  );
  const env = sherlock(['config', 'check', '--config', shipped], { SHERLOCK_SEARCHER__LISTEN: 'everywhere' });
  assert.equal(env.status, 78);
  assert.match(env.stderr, /^sherlock: searcher\.listen: expected HOST:PORT .*, got "everywhere" \(from env SHERLOCK_SEARCHER__LISTEN\)\n$/);
  const set = sherlock(['config', 'dump', '--config', shipped, '--set', 'shepherd.scop=host']);
  assert.equal(set.status, 78);
  assert.equal(set.stderr, 'sherlock: shepherd.scop: unknown key, did you mean shepherd.scope? (from --set)\n');
});

test('config dump prints every value with its source, and --json for scripts', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'sherlock.toml');
  writeFileSync(file, '[shepherd]\nmax_depth = 3\n');
  const run = sherlock(['config', 'dump', '--config', file, '--set', 'gatherer.min_delay=250ms'], {
    SHERLOCK_INDEXER__WORKERS: '2',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^\[gatherer\]\n/);
  assert.match(run.stdout, /\nmin_delay = "250ms" {2}# --set\n/);
  assert.match(run.stdout, new RegExp(`\\nmax_depth = 3  # ${file}:2\\n`));
  assert.match(run.stdout, /\nworkers = 2 {2}# env SHERLOCK_INDEXER__WORKERS\n/);
  assert.match(run.stdout, /\nscope = "host" {2}# default\n/);
  const json = sherlock(['config', 'dump', '--json', '--config', file]);
  const parsed = JSON.parse(json.stdout) as Record<string, { value: unknown; source: string }>;
  assert.deepEqual(parsed['shepherd.max_depth'], { value: 3, source: `${file}:2` });
});

test('usage errors exit 2; help exits 0', () => {
  assert.equal(sherlock(['no-such-command']).status, 2);
  assert.equal(sherlock(['config', 'dump', '--no-such-flag']).status, 2);
  const help = sherlock(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage: sherlock/);
});
