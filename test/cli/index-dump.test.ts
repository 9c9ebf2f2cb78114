/**
 * `sherlock index dump FILE` (cli/index.ts) on files written by the format
 * writers: the format is recognised by its magic, one line (or JSON object)
 * per record, damage and foreign files refused with exit 1 naming the file.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { TextBuilder } from '../../common/bucket/doc-text.js';
import { CARD_FLAG, CardInfoWriter } from '../../common/index/cardinfo.js';
import { CardsWriter } from '../../common/index/cards.js';
import { StringIndexWriter, stringKey, WordIndexWriter } from '../../common/index/chains.js';
import { FingerprintsWriter, LinksWriter } from '../../common/index/fingerprints.js';
import { LEXORDER_FORMAT, writeLexicon, writeLexList } from '../../common/index/lexicon.js';
import { writeSuggestions } from '../../common/index/suggestions.js';
import { writeManifest } from '../../common/index/manifest.js';
import { WORD_EDGE } from '../../common/index/refs.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

async function sherlock(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...args], { env: { PATH: process.env['PATH'] }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

/** Writes one small file of every format into `dir`. */
function writeVersion(dir: string): void {
  const text = new TextBuilder(1000);
  text.append('Hello index');
  const cards = new CardsWriter(join(dir, 'Cards'));
  const position = cards.add({
    cardId: 0,
    url: 'http://example.com/',
    title: 'Example "page"',
    text: text.finish(),
    type: 'text/html',
    size: 1591,
    date: 1_392_526_941,
    arc: { file: 'a.arc.gz', offset: 171, length: 856 },
  });
  cards.finish();
  const info = new CardInfoWriter(join(dir, 'CardInfo'));
  info.add({ position, site: 0xdeadbeef, date: 1_392_526_941, weight: 17, flags: CARD_FLAG.merged | CARD_FLAG.accented, type: 'html', length: 3, language: 'en' });
  info.finish();
  const words = new WordIndexWriter(join(dir, 'WordIndex'));
  const hello = words.add(8, [{ cardId: 0, refs: [{ kind: 'meta', type: 0, weight: 3, position: 0 }, { kind: 'word', type: 0, position: 0 }, { kind: 'word', type: 1, position: WORD_EDGE }] }]);
  words.finish();
  writeLexList(join(dir, 'LexOrder'), LEXORDER_FORMAT, [{ id: 8, frequency: 1, context: 0, word: 'hello' }]);
  writeLexicon(join(dir, 'Lexicon'), [{ id: 8, ...hello, frequency: 0, context: 0, word: 'hello', stemLanguage: 0, stem: 'hello' }]);
  const strings = new StringIndexWriter(join(dir, 'StringIndex'));
  strings.add(stringKey('host', 'example.com'), [{ cardId: 0, refs: [{ kind: 'meta', type: 3, weight: 0, position: 0 }] }]);
  strings.finish();
  const fps = new FingerprintsWriter(join(dir, 'Fingerprints'), true);
  fps.add({ fingerprint: Buffer.alloc(12, 0xab), cardId: 0 });
  fps.finish();
  const links = new LinksWriter(join(dir, 'Links'));
  links.add({ target: Buffer.alloc(12, 0xab), source: 0, type: 'Y' });
  links.finish();
  writeSuggestions(join(dir, 'Suggestions'), [{ key: 'hello', text: 'héllo', rank: 9 }], [{ key: 'example page', text: 'example page', rank: 17 << 16, card: 0 }]);
  writeManifest(dir, { version: 'v1', created: 1_700_000_000, counts: { cards: 1 }, files: ['Cards', 'CardInfo'] });
}

test('index dump prints every format one record per line, told by its magic', async (t) => {
  const dir = scratchDir(t);
  writeVersion(dir);
  const expected: Record<string, string> = {
    CardInfo: '0 pos=0 site=deadbeef date=1392526941 weight=17 flags=merged,accented type=html length=3 lang=en\n',
    Cards: '0 0 http://example.com/ text/html 1591 1392526941 a.arc.gz:171+856 "Example \\"page\\""\n',
    WordIndex: '8 0 title/3@0 text@0 emphasised@edge\n',
    LexOrder: '8 normal 1 0 hello\n',
    Lexicon: 'hello 8 normal ref_pos=0 chain=5 freq=0 context=0 stem=-\n',
    StringIndex: `${stringKey('host', 'example.com').toString('hex')} 0 urlword/0@0\n`,
    Fingerprints: `${'ab'.repeat(12)} 0\n`,
    Links: `${'ab'.repeat(12)} 0 Y\n`,
    Suggestions: `word 9 hello héllo\ntitle ${17 << 16} card=0 "example page" "example page"\n`,
  };
  for (const [name, output] of Object.entries(expected)) {
    const run = await sherlock(['index', 'dump', join(dir, name)]);
    assert.equal(run.stderr, '', name);
    assert.equal(run.status, 0, name);
    assert.equal(run.stdout, output, name);
  }
  const manifest = await sherlock(['index', 'dump', join(dir, 'Manifest')]);
  assert.equal(manifest.status, 0, manifest.stderr);
  assert.match(manifest.stdout, /^format 1\nversion v1\ncreated 1700000000\ncount cards 1\nfile Cards \d+ [0-9a-f]{8}\nfile CardInfo 89 [0-9a-f]{8}\n$/);
});

test('index dump --json prints one object per record', async (t) => {
  const dir = scratchDir(t);
  writeVersion(dir);
  const cards = await sherlock(['index', 'dump', '--json', join(dir, 'Cards')]);
  assert.equal(cards.status, 0, cards.stderr);
  assert.deepEqual(JSON.parse(cards.stdout), {
    position: 0,
    cardId: 0,
    url: 'http://example.com/',
    title: 'Example "page"',
    text: 'Hello index',
    type: 'text/html',
    size: 1591,
    date: 1392526941,
    arc: { file: 'a.arc.gz', offset: 171, length: 856 },
  });
  const words = await sherlock(['index', 'dump', '--json', join(dir, 'WordIndex')]);
  assert.deepEqual(JSON.parse(words.stdout), {
    key: '8',
    refPos: 0,
    cardId: 0,
    refs: [
      { kind: 'meta', type: 0, weight: 3, position: 0 },
      { kind: 'word', type: 0, position: 0 },
      { kind: 'word', type: 1, position: WORD_EDGE },
    ],
  });
  const manifest = await sherlock(['index', 'dump', '--json', join(dir, 'Manifest')]);
  assert.equal((JSON.parse(manifest.stdout) as { files: unknown[] }).files.length, 2);
});

test('index dump refuses a damaged or foreign file with exit 1, naming file and offset', async (t) => {
  const dir = scratchDir(t);
  writeVersion(dir);
  const data = readFileSync(join(dir, 'CardInfo'));
  const cut = join(dir, 'cut');
  writeFileSync(cut, data.subarray(0, data.length - 3));
  const run = await sherlock(['index', 'dump', cut]);
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr, `sherlock: ${cut}: offset 86: CardInfo file cut short: 86 bytes, the header says 89\n`);
  const foreign = join(dir, 'foreign');
  writeFileSync(foreign, 'hello world\n');
  const other = await sherlock(['index', 'dump', foreign]);
  assert.equal(other.status, 1);
  assert.equal(other.stderr, `sherlock: ${foreign}: offset 0: not an index file (magic "hello world\\n")\n`);
  const missing = await sherlock(['index', 'dump', join(dir, 'missing')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /missing: no such file/);
});
