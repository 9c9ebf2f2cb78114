/**
 * `sherlock index build` on a crawled loopback site, checked through the
 * readers of common/index-*.ts: every word of every page is in the Lexicon
 * and its WordIndex chain holds the card at the word's positions with its
 * types; title words carry the title meta type; Cards give back URL, title
 * and text; CardInfo, Fingerprints, StringIndex and the Manifest agree; the
 * redirect and the noindex page are empty cards.
 */

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readDocText, WORD_TYPE } from '../../common/bucket/doc-text.js';
import { CARD_FLAG, CardInfoReader, lengthCode } from '../../common/index/cardinfo.js';
import { CardsReader, type Card } from '../../common/index/cards.js';
import { StringIndexReader, stringKey, WordIndexReader } from '../../common/index/chains.js';
import { Suggestions } from '../../common/index/suggestions.js';
import { Fingerprints, readLinks } from '../../common/index/fingerprints.js';
import { Lexicon } from '../../common/index/lexicon.js';
import { verifyIndexDir } from '../../common/index/manifest.js';
import { MAX_WORD_POSITION, type Chain } from '../../common/index/refs.js';
import { fingerprint } from '../../common/url.js';
import { exactForm, rawWords, words } from '../../common/words.js';
import { readRefTexts } from '../../indexer/work-files.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from './site.js';

/** Word refs a card's text must give: exact form → "type@position" list, by the chewer's rule (a gap of one at each break). */
function expectedWords(card: Card): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let base = 0;
  for (const token of readDocText(card.text)) {
    if (token.kind === 'break') {
      if (base > 0) base += 1;
    } else if (token.kind === 'text') {
      let last = -1;
      for (const raw of rawWords(token.text)) {
        last = raw.position;
        const position = base + raw.position;
        const exact = exactForm(raw.text);
        if (raw.kind !== 'garbage' && position <= MAX_WORD_POSITION) out.set(exact, [...(out.get(exact) ?? []), `${token.type}@${position}`]);
      }
      base += last + 1;
    }
  }
  return out;
}

/** The words of a card's body (its text, garbage words included): what CardInfo's length counts. */
function bodyWords(card: Card): number {
  let words = 0;
  for (const token of readDocText(card.text)) {
    if (token.kind !== 'text') continue;
    let last = -1;
    for (const raw of rawWords(token.text)) last = raw.position;
    words += last + 1;
  }
  return words;
}

function chainOf(chains: Chain[], cardId: number): Chain | undefined {
  return chains.find((chain) => chain.cardId === cardId);
}

test('index build makes a version whose every file the common readers accept and whose chains hold every word of every page', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: '127.0.0.71' });
  const { report } = await buildCli(state, ['indexer.workers=2'], ['--keep-work']);
  const dir = join(state, 'index', 'current');
  const manifest = verifyIndexDir(dir);
  assert.equal(manifest.version, report.version);
  assert.deepEqual(readdirSync(join(state, 'index')).sort(), [report.version, 'current']);
  assert.deepEqual(
    manifest.files.map((f) => f.name).sort(),
    ['AnchoredPostings', 'Attributes', 'CardInfo', 'Cards', 'Checksums', 'Feedback', 'Fingerprints', 'LexByFreq', 'LexOrder', 'LexRaw', 'Lexicon', 'Links', 'Merges', 'Postings', 'RefTexts', 'Signatures', 'StringIndex', 'Suggestions', 'WordIndex'],
  );

  const info = CardInfoReader.open(join(dir, 'CardInfo'));
  const cards = CardsReader.open(join(dir, 'Cards'));
  const fingerprints = Fingerprints.open(join(dir, 'Fingerprints'));
  const lexicon = Lexicon.open(join(dir, 'Lexicon'));
  const wordIndex = WordIndexReader.open(join(dir, 'WordIndex'));
  const strings = StringIndexReader.open(join(dir, 'StringIndex'));
  t.after(() => [cards, wordIndex, strings].forEach((r) => r.close()));

  const byPath = new Map<string, Card>();
  assert.equal(info.count, manifest.counts['cards']);
  for (let id = 0; id < info.count; id++) {
    const card = cards.get(info.get(id).position, id);
    byPath.set(card.url.slice(origin.length), card);
    assert.equal(fingerprints.lookup(fingerprint(card.url)), id, `Fingerprints find ${card.url}`);
  }
  assert.deepEqual([...byPath.keys()].sort(), ['/', '/accents', '/cjk', '/hidden', '/moved', '/twin-a', '/twin-b', '/long', '/long-edit', '/popular', '/lonely', '/menu-a', '/menu-b', '/pipe.png'].sort());

  // Suggestions: titles of the cards shown (twins once, the noindex page and the image not at all), words without numbers.
  const suggestions = Suggestions.open(join(dir, 'Suggestions'));
  const titles = Array.from({ length: suggestions.titles.count }, (_, n) => suggestions.titles.text(n));
  assert.deepEqual(titles.sort(), ['crème brûlée', 'long', 'lonely', 'orchard', 'popular', 'sherlock holmes home', 'twin', '東京ノート'].sort());
  assert.equal(manifest.counts['suggested_titles'], titles.length);
  const [cafeAt] = suggestions.words.range('cafe');
  assert.equal(suggestions.words.key(cafeAt), 'cafe');
  assert.ok(['cafe', 'café'].includes(suggestions.words.text(cafeAt)));
  for (let n = 0; n < suggestions.words.count; n++) assert.doesNotMatch(suggestions.words.key(n), /^\d+$/);

  // Cards give back what the pages said; CardInfo flags the empty ones.
  const home = byPath.get('/')!;
  assert.equal(home.title, 'Sherlock Holmes Home');
  assert.equal(home.type, 'text/html');
  assert.match(plain(home), /consulting detective lives at Baker Street/);
  for (const path of ['/', '/accents', '/cjk']) {
    const card = byPath.get(path)!;
    const record = info.get(card.cardId);
    assert.equal(record.flags & CARD_FLAG.empty, 0, path);
    assert.equal(record.type, 'html');
    assert.ok(record.date > 1_600_000_000, `${path} has a date`);
    assert.equal(record.site, info.get(home.cardId).site, 'one site');
    assert.ok(bodyWords(card) > 0);
    assert.equal(record.length, lengthCode(bodyWords(card)), `${path}: length`);
  }
  assert.notEqual(info.get(byPath.get('/accents')!.cardId).flags & CARD_FLAG.accented, 0, 'accented');
  assert.equal(info.get(home.cardId).flags & CARD_FLAG.accented, 0);
  for (const path of ['/moved', '/hidden']) {
    const card = byPath.get(path)!;
    assert.notEqual(info.get(card.cardId).flags & CARD_FLAG.empty, 0, `${path} is an empty card`);
    assert.equal(info.get(card.cardId).length, 0, `${path} has no length`);
    assert.equal(card.text.length, 0);
  }
  assert.equal(lexicon.lookup('secretword'), undefined, 'a noindex page gives no words');

  // The home page's <img alt="curved pipe"> is an image card after the buckets' cards: never fetched, found by its alt text.
  const pipe = byPath.get('/pipe.png')!;
  assert.equal(manifest.counts['images'], 1);
  assert.equal(pipe.cardId, info.count - 1, 'image cards follow the buckets\' cards');
  assert.deepEqual([pipe.title, pipe.type, pipe.referrer, plain(pipe), pipe.arc.file], ['curved pipe', 'image/png', `${origin}/`, 'curved pipe', '-']);
  assert.equal(info.get(pipe.cardId).type, 'image');
  assert.equal(info.get(pipe.cardId).flags & (CARD_FLAG.empty | CARD_FLAG.dup), 0);
  assert.equal(info.get(pipe.cardId).date, info.get(home.cardId).date, 'its page\'s date');
  const curved = lexicon.lookup('curved')!;
  assert.deepEqual(
    wordIndex.chains(curved.id, curved.refPos).map((chain) => chain.cardId).sort((a, b) => a - b),
    [home.cardId, pipe.cardId],
    'the alt text is the page\'s words and the image card\'s',
  );
  assert.deepEqual(strings.chains(stringKey('url', pipe.url)).map((c) => c.cardId), [pipe.cardId]);

  // Every word of every page: in the Lexicon, its chain holds the card at the word's positions and types.
  for (const path of ['/', '/accents', '/cjk']) {
    const card = byPath.get(path)!;
    for (const [word, refs] of expectedWords(card)) {
      const entry = lexicon.lookup(word);
      assert.ok(entry !== undefined, `${path}: ${word} is in the Lexicon`);
      const chain = chainOf(wordIndex.chains(entry.id, entry.refPos), card.cardId);
      assert.ok(chain !== undefined, `${path}: the chain of ${word} holds card ${card.cardId}`);
      const got = chain.refs.flatMap((ref) => (ref.kind === 'word' ? [`${ref.type}@${ref.position}`] : []));
      assert.deepEqual(got, refs, `${path}: ${word}`);
    }
    // Title words carry the title meta type, at their positions in the title.
    [...words(card.title!)].forEach((word, i) => {
      const entry = lexicon.lookup(word.exact)!;
      const chain = chainOf(wordIndex.chains(entry.id, entry.refPos), card.cardId)!;
      assert.ok(chain.refs.some((ref) => ref.kind === 'meta' && ref.type === 0 && ref.position === i), `${path}: title word ${word.exact}`);
    });
    // The URL is found by StringIndex.
    assert.deepEqual(strings.chains(stringKey('url', card.url)).map((c) => c.cardId), [card.cardId]);
  }
  const indexed = [...byPath.values()].filter((c) => (info.get(c.cardId).flags & CARD_FLAG.empty) === 0).map((c) => c.cardId).sort((a, b) => a - b);
  assert.deepEqual(strings.chains(stringKey('host', new URL(origin).hostname)).map((c) => c.cardId), indexed);

  // Word types of the home page, and what the lexicon stage put side by side.
  const types = (word: string, cardId: number) => chainOf(wordIndex.chains(lexicon.lookup(word)!.id, lexicon.lookup(word)!.refPos), cardId)!.refs.map((r) => r.type);
  assert.deepEqual(types('welcome', home.cardId), [WORD_TYPE.heading1]);
  assert.deepEqual(types('famous', home.cardId), [WORD_TYPE.emphasised]);
  assert.deepEqual(types('fine', home.cardId), [WORD_TYPE.small]);
  assert.deepEqual(types('pipe', home.cardId), [WORD_TYPE.alt]);
  assert.deepEqual(lexicon.variants('creme').map((e) => e.word), ['crème']);
  assert.deepEqual(lexicon.variants('cafe').map((e) => e.word), ['cafe', 'café']);
  assert.deepEqual(lexicon.variants('strasse').map((e) => e.word), ['straße']);
  const cafe = lexicon.variants('cafe');
  assert.equal(cafe[1]!.id - cafe[0]!.id, 8, 'accent variants have adjacent ids');
  assert.ok(lexicon.lookup('京都') !== undefined && lexicon.lookup('東京') !== undefined, 'CJK text is cut into pairs');

  // Links carry the redirect's target and every anchor; RefTexts the anchor texts.
  const links = [...readLinks(join(dir, 'Links'))].map((l) => `${l.source} ${l.type} ${l.target.toString('hex')}`);
  const target = (path: string) => fingerprint(origin + path).toString('hex');
  assert.ok(links.includes(`${byPath.get('/moved')!.cardId} Y ${target('/accents')}`), 'the redirect is a Y link');
  assert.ok(links.includes(`${home.cardId} R ${target('/cjk')}`));
  const anchors = [...readRefTexts(join(dir, 'RefTexts'))].map((r) => `${r.source} ${r.target.toString('hex')} ${r.text}`);
  assert.ok(anchors.includes(`${home.cardId} ${target('/accents')} about desserts`), anchors.join('\n'));
});

function plain(card: Card): string {
  return [...readDocText(card.text)].map((token) => (token.kind === 'text' ? token.text : token.kind === 'break' ? '\n' : '')).join('');
}
