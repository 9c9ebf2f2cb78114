/**
 * The shipped etc/sites.d/example.toml: as installed it sets nothing (every
 * rule commented out), and with its rules uncommented it is a valid rule file
 * whose rules do what its comments say.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SiteRules } from '../../common/site-rules.js';
import { repoRoot } from '../helpers/paths.js';

const file = join(repoRoot, 'etc', 'sites.d', 'example.toml');
const text = readFileSync(file, 'utf8');

test('the shipped example rule file holds no rule as shipped', () => {
  assert.equal(SiteRules.fromTexts([{ file, text }]).empty, true);
});

test('the shipped example rule file, uncommented, is valid and its rules apply where its comments say', () => {
  // Lines of TOML are commented out with "#" right before them; prose has "# ".
  const uncommented = text.replace(/^#(?=[[a-z])/gm, '');
  const rules = SiteRules.fromTexts([{ file, text: uncommented }]);
  assert.equal(rules.rules.length, 4);
  assert.equal(rules.setting('https://wiki.intranet.example/', 'delay'), 200);
  assert.match(rules.refusal('https://wiki.intranet.example/login') ?? '', /reject "\/login"/);
  assert.equal(rules.setting('https://www.slow-example.org/', 'delay'), 30_000);
  assert.equal(rules.setting('https://docs.example.net/manual/x', 'index'), false);
  assert.match(rules.refusal('https://docs.example.net/blog/') ?? '', /no accept pattern/);
  assert.match(rules.refusal('https://forum.example.com/t/1?print=1') ?? '', /reject/);
  assert.equal(rules.setting('https://forum.example.com/t/1', 'weight'), -0.2);
  assert.equal(rules.hostSetting('forum.example.com', 'result_cap'), 3);
});
