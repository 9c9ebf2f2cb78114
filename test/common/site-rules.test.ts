import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { isSherlockError, SherlockError } from '../../common/errors.js';
import { SiteRules, siteRulesDir } from '../../common/site-rules.js';
import { scratchDir } from '../helpers/paths.js';

const rules = (text: string, file = 'a.toml'): SiteRules => SiteRules.fromTexts([{ file, text }]);

function refused(text: string): SherlockError {
  try {
    rules(text);
  } catch (err) {
    assert.ok(isSherlockError(err, 'SHERLOCK_BAD_CONFIG'), String(err));
    return err;
  }
  assert.fail('the rules were accepted');
}

test('each matcher kind finds its URLs: host pattern, registrable domain, prefix, regex', () => {
  const r = rules(`
[[site]]
host = "*.example.org"
delay = "1s"

[[site]]
domain = "example.co.uk"
delay = "2s"

[[site]]
prefix = "https://EXAMPLE.net/docs"
delay = "3s"

[[site]]
regex = "[?&]print=1"
delay = "4s"
`);
  const delay = (url: string) => r.setting(url, 'delay');
  assert.equal(delay('https://example.org/'), 1000);
  assert.equal(delay('https://a.b.example.org/x'), 1000);
  assert.equal(delay('https://notexample.org/'), undefined);
  assert.equal(delay('https://a.example.co.uk/'), 2000);
  assert.equal(delay('https://co.uk/'), undefined);
  assert.equal(delay('https://example.net/docs/a'), 3000);
  assert.equal(delay('https://example.net/doc'), undefined);
  assert.equal(delay('https://other.net/a?print=1'), 4000);
});

test('a setting comes from the last matching rule that sets it; reject and robots_disallow add up', () => {
  const r = SiteRules.fromTexts([
    { file: '10-all.toml', text: '[[site]]\nhost = "*.example.org"\ndelay = "10s"\nreject = ["/a"]\nrobots_disallow = ["/x"]\nindex = false\n' },
    { file: '20-docs.toml', text: '\n[[site]]\nprefix = "https://docs.example.org/"\ndelay = "1s"\nreject = ["/b"]\nrobots_disallow = ["/y"]\n' },
  ]);
  const e = r.effective('https://docs.example.org/page');
  assert.deepEqual(e.rules.map((rule) => rule.where), ['10-all.toml:1', '20-docs.toml:2']);
  assert.equal(e.settings.delay, 1000);
  assert.equal(e.from.delay![0]!.where, '20-docs.toml:2');
  assert.deepEqual(e.settings.reject, ['/a', '/b']);
  assert.deepEqual(e.settings.robots_disallow, ['/x', '/y']);
  assert.equal(e.settings.index, false);
  assert.equal(r.effective('https://www.example.org/').settings.delay, 10_000);
});

test('result_cap is a setting of whole hosts: from their host and domain rules, the last that sets it', () => {
  const r = rules('[[site]]\ndomain = "example.org"\nresult_cap = 5\n[[site]]\nhost = "*.docs.example.org"\nresult_cap = 2\n[[site]]\nprefix = "https://www.example.org/"\ndelay = "1s"\n');
  assert.equal(r.sets('result_cap'), true);
  assert.equal(r.sets('weight'), false);
  assert.equal(r.hostSetting('www.example.org', 'result_cap'), 5);
  assert.equal(r.hostSetting('a.docs.example.org', 'result_cap'), 2);
  assert.equal(r.hostSetting('other.example', 'result_cap'), undefined);
  assert.equal(r.hostSetting('www.example.org', 'delay'), undefined, 'a prefix rule is no setting of the host');
  assert.equal(r.setting('https://a.docs.example.org/x', 'result_cap'), 2);
});

test('connections is a setting of whole hosts: up to 16, from host and domain rules', () => {
  const r = rules('[[site]]\ndomain = "example.org"\nconnections = 16\n[[site]]\nhost = "slow.example.org"\nconnections = 1\n');
  assert.equal(r.hostSetting('www.example.org', 'connections'), 16);
  assert.equal(r.hostSetting('slow.example.org', 'connections'), 1);
  assert.equal(r.hostSetting('other.example', 'connections'), undefined);
});

test('a bad rule is refused with file:line: unknown key with did-you-mean, bad value, bad regex, no matcher, two matchers', () => {
  assert.match(refused('[[site]]\nhost = "a.example"\n\ndelya = "1s"\n').message, /^a\.toml:4: delya: unknown key, did you mean delay\?/);
  assert.match(refused('[[site]]\nhost = "a.example"\nconnections = 17\n').message, /^a\.toml:3: connections: .*got 17/);
  assert.match(refused('[[site]]\nhost = "a.example"\nconnections = 0\n').message, /^a\.toml:3: connections: .*got 0/);
  assert.match(refused('[[site]]\nregex = "^https://a\\\\.example/"\n\nconnections = 2\n').message, /^a\.toml:4: connections: .*only a host or domain rule may set it, not a regex rule/);
  assert.match(refused('[[site]]\nhost = "a.example"\n[[site]]\nhost = "b.example"\ndelay = 3\n').message, /^a\.toml:5: delay: .*got 3/);
  assert.match(refused('[[site]]\nhost = "a.example"\nweight = 1.5\n').message, /^a\.toml:3: weight: .*got 1\.5/);
  assert.match(refused('[[site]]\nprefix = "https://a.example/docs/"\nresult_cap = 3\n').message, /^a\.toml:3: result_cap: .*only a host or domain rule may set it, not a prefix rule/);
  assert.match(refused('[[site]]\nhost = "a.example"\nresult_cap = 0\n').message, /^a\.toml:3: result_cap: .*got 0/);
  assert.match(refused('[[site]]\nhost = "a.example"\nresult_cap = 2.5\n').message, /^a\.toml:3: result_cap: .*got 2\.5/);
  assert.match(refused('[[site]]\nregex = "a(b"\n').message, /^a\.toml:2: regex: .*not a valid regular expression/);
  assert.match(refused('[[site]]\nhost = "a.example"\nreject = ["ok", "(("]\n').message, /^a\.toml:3: reject: entry 1/);
  assert.match(refused('# nothing\n[[site]]\ndelay = "1s"\n').message, /^a\.toml:2: a rule needs exactly one matcher .* found none/);
  assert.match(refused('[[site]]\nhost = "a.example"\ndomain = "a.example"\n').message, /^a\.toml:1: .*found host, domain/);
  assert.match(refused('[[site]]\ndomain = "www.example.com"\n').message, /^a\.toml:2: domain: www\.example\.com is not a registrable domain/);
  assert.match(refused('[[site]]\nhost = "a.example"\nmin_refetch = "2h"\nmax_refetch = "1h"\n').message, /^a\.toml:3: min_refetch/);
  assert.match(refused('[[site]]\nhost = "a.example"\nrobots_disallow = ["private"]\n').message, /^a\.toml:3: robots_disallow/);
  assert.match(refused('[[sites]]\nhost = "a.example"\n').message, /^a\.toml:1: sites: unknown key, did you mean site\?/);
  assert.match(refused('[[site]]\nhost = "a.example\n').message, /^a\.toml:2:\d+: TOML syntax error/);
});

test('the rule files are sites.d beside the config file by default, read in name order; a missing directory is no rules', (t) => {
  const dir = scratchDir(t, 'sherlock-sites-');
  const config = join(dir, 'sherlock.toml');
  assert.equal(siteRulesDir({ dir: '' }, config), join(dir, 'sites.d'));
  assert.equal(siteRulesDir({ dir: 'rules' }, config), join(dir, 'rules'));
  assert.equal(siteRulesDir({ dir: '/x/y' }, config), '/x/y');
  assert.equal(siteRulesDir({ dir: '' }, undefined), undefined);
  assert.equal(SiteRules.load(join(dir, 'sites.d')).empty, true);
  mkdirSync(join(dir, 'sites.d'));
  writeFileSync(join(dir, 'sites.d', 'b.toml'), '[[site]]\nhost = "a.example"\ndelay = "2s"\n');
  writeFileSync(join(dir, 'sites.d', 'a.toml'), '[[site]]\nhost = "a.example"\ndelay = "1s"\n');
  writeFileSync(join(dir, 'sites.d', 'notes.txt'), 'not a rule file');
  const loaded = SiteRules.load(join(dir, 'sites.d'));
  assert.deepEqual(loaded.files, [join(dir, 'sites.d', 'a.toml'), join(dir, 'sites.d', 'b.toml')]);
  assert.equal(loaded.setting('http://a.example/', 'delay'), 2000);
});

test('matching stays fast with many host rules: 100 000 URLs against 2 000 rules in well under a second', () => {
  const text = Array.from({ length: 2000 }, (_, i) => `[[site]]\nhost = "*.site${i}.example"\ndelay = "${i}ms"\n`).join('\n') + '[[site]]\nregex = "/private/"\nindex = false\n';
  const r = rules(text);
  const started = performance.now();
  let found = 0;
  let expected = 0;
  for (let i = 0; i < 100_000; i++) {
    found += r.matching(`https://www.site${i % 3000}.example/page/${i}`).length;
    if (i % 3000 < 2000) expected += 1;
  }
  const elapsed = performance.now() - started;
  assert.equal(found, expected);
  assert.ok(elapsed < 1000, `${elapsed} ms`);
});
