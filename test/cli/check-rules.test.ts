/**
 * `sherlock check rules URL` through the built CLI, with rule files in a
 * sites.d beside a real config file; `check robots` and `check fetch`
 * following them against a real server on 127.0.0.229.
 */

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import type { TestContext } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

/** A config file with the given rule files in sites.d beside it; its path. */
function configWithRules(t: TestContext, files: Record<string, string>): string {
  const dir = scratchDir(t, 'sherlock-check-rules-');
  writeFileSync(join(dir, 'sherlock.toml'), '');
  mkdirSync(join(dir, 'sites.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'sites.d', name), text);
  return join(dir, 'sherlock.toml');
}

const RULES = {
  '10-domain.toml': '[[site]]\ndomain = "example.org"\ndelay = "30s"\nreject = ["/login"]\n',
  '20-docs.toml': '# the manual\n[[site]]\nprefix = "https://docs.example.org/manual/"\ndelay = "1s"\nindex = false\nreject = ["[?]print"]\n',
};

test('check rules prints each applying rule with file:line and matcher, then each setting with the rules it came from', async (t) => {
  const config = configWithRules(t, RULES);
  const sites = join(config, '..', 'sites.d');
  const run = await runCli(['--config', config, 'check', 'rules', 'https://Docs.Example.org/manual/a']);
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  assert.deepEqual(lines, [
    'url          https://docs.example.org/manual/a',
    `rule         ${sites}/10-domain.toml:1 domain = "example.org"`,
    `rule         ${sites}/20-docs.toml:2 prefix = "https://docs.example.org/manual/"`,
    `delay        1s (from ${sites}/20-docs.toml:2)`,
    `reject       "/login", "[?]print" (from ${sites}/10-domain.toml:1, ${sites}/20-docs.toml:2)`,
    `index        false (from ${sites}/20-docs.toml:2)`,
  ]);

  const json = await runCli(['--config', config, 'check', 'rules', 'https://www.example.org/', '--json']);
  assert.equal(json.status, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { settings: Record<string, unknown>; from: Record<string, string[]>; rules: unknown[] };
  assert.deepEqual(report.settings, { delay: 30_000, reject: ['/login'] });
  assert.deepEqual(report.from['delay'], [`${sites}/10-domain.toml:1`]);
  assert.equal(report.rules.length, 1);

  const none = await runCli(['--config', config, 'check', 'rules', 'https://example.net/']);
  assert.equal(none.status, 0, none.stderr);
  assert.match(none.stdout, /^rules {8}none of 2 in 2 files applies$/m);
});

test('check rules: a bad rule file is exit 78 naming file:line, a bad URL exit 2', async (t) => {
  const config = configWithRules(t, { ...RULES, '30-bad.toml': '[[site]]\nhost = "a.example"\n\nconection = 1\n' });
  const bad = await runCli(['--config', config, 'check', 'rules', 'https://example.org/']);
  assert.equal(bad.status, 78);
  assert.match(bad.stderr, /30-bad\.toml:4: conection: unknown key, did you mean connections\?/);
  assert.equal(bad.stdout, '');

  const good = configWithRules(t, RULES);
  const url = await runCli(['--config', good, 'check', 'rules', 'ftp://example.org/']);
  assert.equal(url.status, 2);
});

test('check robots and check fetch follow the site rules: the rule delay, and robots_disallow disallows without a fetch', async (t) => {
  const server = await startFixture({
    address: '127.0.0.229',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
      '*': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<title>t</title>'),
    },
  });
  t.after(() => server.close());
  const config = configWithRules(t, { 'local.toml': '[[site]]\nhost = "127.0.0.229"\ndelay = "250ms"\nrobots_disallow = ["/drafts/"]\n' });
  const sites = join(config, '..', 'sites.d');
  const args = ['--config', config, '--set', 'gatherer.allow_private_addresses=true'];

  const open = await runCli([...args, 'check', 'robots', `${server.origin}/pub`]);
  assert.equal(open.status, 0, open.stderr);
  assert.match(open.stdout, new RegExp(`^delay {8}250ms between requests to 127\\.0\\.0\\.229 \\(delay of site rule ${sites}/local\\.toml:1\\)$`, 'm'));
  assert.match(open.stdout, /^verdict {6}allowed$/m);

  const drafts = await runCli([...args, 'check', 'fetch', `${server.origin}/drafts/x`, '--json']);
  assert.equal(drafts.status, 0, drafts.stderr);
  const report = JSON.parse(drafts.stdout) as { robots: { verdict: string; ruleRefusal: string; delayMs: number }; fetch: unknown };
  assert.equal(report.robots.verdict, 'disallowed');
  assert.equal(report.robots.ruleRefusal, `disallowed by site rule ${sites}/local.toml:1 (robots_disallow /drafts/)`);
  assert.equal(report.robots.delayMs, 250);
  assert.equal(report.fetch, null);
  assert.deepEqual(server.requests.map((r) => r.path), ['/robots.txt', '/robots.txt'], 'the drafts page was never requested');
});
