/**
 * `gatherer run` and `shepherd run` serve /metrics on their admin listeners
 * (gatherer.admin_listen, shepherd.admin_listen): valid text with the part's
 * own metrics and the process figures, until SIGTERM closes it.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startCli, until, type Running } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';

async function metricsUrl(running: Running): Promise<string> {
  const line = /metrics listening .*address=(\S+)/;
  await until('the metrics listener', () => line.test(running.stderr));
  return line.exec(running.stderr)![1]!;
}

/** Scrapes until `ok` holds of the parsed text (the daemon's parts register as they open). */
async function scrapeUntil(url: string, what: string, ok: (families: ReturnType<typeof parseExposition>) => boolean): Promise<ReturnType<typeof parseExposition>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const families = parseExposition(await (await fetch(url)).text());
    if (ok(families)) return families;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const part of ['gatherer', 'shepherd'] as const) {
  test(`${part} run serves /metrics on ${part}.admin_listen until stopped`, { timeout: 120_000 }, async (t) => {
    const running = startCli(t, [part, 'run', '--state', scratchDir(t), '--set', `${part}.admin_listen=127.0.0.1:0`]);
    const url = await metricsUrl(running);
    const own = part === 'gatherer' ? 'sherlock_gatherer_queue_depth' : 'sherlock_shepherd_cycles_total';
    const families = await scrapeUntil(url, own, (f) => (sampleValue(f, own) ?? 0) >= (part === 'gatherer' ? 0 : 1));
    assert.ok(sampleValue(families, 'process_resident_memory_bytes')! > 0);
    assert.equal(sampleValue(families, 'sherlock_build_info', { version: '0.1.0', node: process.version }), 1);
    // Stopping takes a signal handler, installed once the daemon runs (a SIGTERM before that ends the process as Node does by default).
    await until(`${part} running`, () => running.stderr.includes(`${part} running`));
    running.child.kill('SIGTERM');
    assert.equal(await running.exited, 0, running.stderr);
    await assert.rejects(fetch(url), 'the listener closes with the daemon');
  });
}

test('an admin_listen that is not loopback is refused as bad config (78)', { timeout: 60_000 }, async (t) => {
  const running = startCli(t, ['gatherer', 'run', '--state', scratchDir(t), '--set', 'gatherer.admin_listen=0.0.0.0:9431']);
  assert.equal(await running.exited, 78, running.stderr);
  assert.match(running.stderr, /gatherer\.admin_listen/);
});
