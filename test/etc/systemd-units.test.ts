/**
 * The systemd units in etc/systemd/: `systemd-analyze verify` accepts every
 * one without a warning, `systemd-analyze security --offline=yes` rates each
 * service's exposure at 4.0 or below, and each keeps the conventions the
 * daemons rely on (Type=notify, the watchdog, reload by SIGHUP, no restart on
 * exit 78, its own runtime subdirectory, never MemoryDenyWriteExecute).
 *
 * verify checks that ExecStart's binary exists, and the units name Debian's
 * /usr/bin/node, so the test verifies copies naming this machine's node and
 * the CLI just built (as .ci/run does).
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliPath, repoRoot, scratchDir } from '../helpers/paths.js';

const UNIT_DIR = join(repoRoot, 'etc', 'systemd');
const DAEMONS = ['gatherer', 'shepherd', 'indexer', 'searcher'];

function unitText(name: string): string {
  return readFileSync(join(UNIT_DIR, name), 'utf8');
}

/** Values of a key in a unit file, in order. */
function values(text: string, key: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

function analyze(args: string[]): { status: number | null; out: string } {
  const run = spawnSync('systemd-analyze', args, { encoding: 'utf8' });
  assert.equal(run.error, undefined, `systemd-analyze cannot run (install Debian's systemd): ${String(run.error)}`);
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

test('etc/systemd holds a service per daemon and the target that groups them', () => {
  const files = readdirSync(UNIT_DIR).sort();
  assert.deepEqual(files, ['sherlock-gatherer.service', 'sherlock-indexer.service', 'sherlock-searcher.service', 'sherlock-shepherd.service', 'sherlock.target']);
  const wants = values(unitText('sherlock.target'), 'Wants').join(' ').split(' ');
  assert.deepEqual(wants.sort(), DAEMONS.map((d) => `sherlock-${d}.service`).sort());
});

test('every unit passes systemd-analyze verify without a warning', (t) => {
  const dir = scratchDir(t);
  const copies = readdirSync(UNIT_DIR).map((name) => {
    const text = unitText(name).replace(/^ExecStart=\/usr\/bin\/node \/usr\/lib\/sherlock\/dist\/cli\/sherlock\.js /m, `ExecStart=${process.execPath} ${cliPath} `);
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  });
  const { status, out } = analyze(['verify', ...copies]);
  assert.equal(status, 0, out);
  assert.equal(out, '', 'verify warned');
});

for (const daemon of DAEMONS) {
  const name = `sherlock-${daemon}.service`;
  test(`${name}: exposure at most 4.0, notify with watchdog and reload, no restart on bad config, V8-safe`, () => {
    const text = unitText(name);
    const { status, out } = analyze(['security', '--offline=yes', join(UNIT_DIR, name)]);
    assert.equal(status, 0, out);
    const level = /Overall exposure level for \S+: (\d+\.\d+)/.exec(out);
    assert.ok(level !== null, out);
    assert.ok(Number(level[1]) <= 4.0, `exposure ${level[1]}`);
    assert.deepEqual(values(text, 'Type'), ['notify']);
    assert.match(values(text, 'ExecStart')[0] ?? '', new RegExp(` ${daemon} run$`));
    assert.deepEqual(values(text, 'ExecReload'), ['/bin/kill -HUP $MAINPID']);
    assert.equal(values(text, 'WatchdogSec').length, 1);
    assert.deepEqual(values(text, 'Restart'), ['on-failure']);
    assert.deepEqual(values(text, 'RestartPreventExitStatus'), ['78']);
    assert.deepEqual(values(text, 'SyslogIdentifier'), [`sherlock-${daemon}`]);
    assert.deepEqual(values(text, 'StateDirectory'), ['sherlock']);
    assert.deepEqual(values(text, 'RuntimeDirectory'), [`sherlock/${daemon}`]);
    assert.deepEqual(values(text, 'PartOf'), ['sherlock.target']);
    assert.deepEqual(values(text, 'MemoryDenyWriteExecute'), [], 'V8 aborts under MemoryDenyWriteExecute');
  });
}
