/**
 * Snippets (snippet.ts) from a real `X` text (doc-text.ts TextBuilder): the
 * query's words marked and the rest escaped, windows around the matches
 * with most matched words, blocks apart, the content before the menus,
 * and a card matching everywhere looked at only up to its first matches.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { TextBuilder } from '../../common/bucket/doc-text.js';
import { cutWords, exactForm, plainForm } from '../../common/words.js';
import { parseQuery } from '../../searcher/query.js';
import { CardText, Marker, highlight } from '../../searcher/snippet.js';

/** A card of blocks; a block given as [text] is a link's text (a menu item). */
function card(...blocks: Array<string | [string]>): CardText {
  const builder = new TextBuilder(1 << 20);
  blocks.forEach((block, n) => {
    if (typeof block === 'string') builder.append(block);
    else {
      builder.openLink(n);
      builder.append(block[0]);
      builder.closeLink();
    }
    builder.breakBlock();
  });
  return CardText.of(builder.finish());
}

const menu = (...items: string[]): Array<[string]> => items.map((item) => [item]);

const snippet = (text: CardText, q: string) => text.snippet(new Marker(highlight(parseQuery(q)))).html;

test('a snippet marks the query\'s words, escapes the rest and shows the windows around matches in text order', () => {
  const text = card('One zebra here.', `${'filler '.repeat(40)}`, 'A <zebra> & a zebra with stripes.');
  assert.equal(
    snippet(text, 'stripes zebra'),
    'One <mark>zebra</mark> here. filler filler filler filler filler filler filler filler filler … filler filler filler filler filler · A &#60;<mark>zebra</mark>&#62; &#38; a <mark>zebra</mark> with <mark>stripes</mark>.',
  );
});

test('a card matching everywhere shows windows among its first matches only', () => {
  // Past line 100 each line has two matches, so windows there would hold the most.
  const lines = Array.from({ length: 200 }, (_, i) => (i < 100 ? `zebra line${i} of the page.` : `zebra line${i} zebra page.`));
  const text = card(...lines);
  const out = snippet(text, 'zebra');
  assert.match(out, /line0 /);
  // Windows are chosen among the first 64 matches: none past line 63 is seen.
  for (const n of out.matchAll(/line(\d+)/g)) assert.ok(Number(n[1]) < 64, out);
});

test('a text with page breaks (a PDF\'s) says the page of the first fragment\'s first match; one without says none', () => {
  const builder = new TextBuilder(1 << 20);
  builder.append('Preface words on the first page.');
  builder.breakPage(2);
  builder.append(`The quokka appears here. ${'filler '.repeat(40)}`);
  builder.breakPage(4);
  builder.append('A wombat lives on page four.');
  const text = CardText.of(builder.finish());
  const at = (q: string) => text.snippet(new Marker(highlight(parseQuery(q))));
  assert.equal(at('quokka').page, 2);
  assert.equal(at('wombat').page, 4);
  assert.equal(at('wombat quokka').page, 2, 'the first fragment in text order');
  assert.equal(at('preface').page, 1);
  assert.equal(at('nothing').page, 1, 'the lead: the start of the text');
  assert.equal(card('No pages here.').snippet(new Marker(highlight(parseQuery('pages')))).page, undefined);
});

test('a match in the content is shown rather than the menu, and its window stays out of the menu', () => {
  const text = card(...menu('Home', 'Kernel docs', 'Driver guide', 'Memory management'), 'Writing a driver for the kernel takes a few steps that this guide walks through.', ...menu('Next', 'Previous'));
  assert.equal(snippet(text, 'kernel driver'), '… Writing a <mark>driver</mark> for the <mark>kernel</mark> takes a few steps that this guide walks through …');
});

test('a menu is shown when it has more of the query\'s words than the content', () => {
  const text = card(...menu('Home', 'Linux driver guide', 'Memory'), 'Some words about the guide.');
  assert.equal(snippet(text, '"linux driver guide"'), 'Home · <mark>Linux</mark> <mark>driver</mark> <mark>guide</mark> · Memory … Some words about the <mark>guide</mark>.');
});

test('blocks that do not end a sentence are kept apart; a repeated heading is shown once', () => {
  const text = card('Locking guide', 'Locking guide', 'Spinlocks and mutexes. Locking rules follow');
  assert.equal(snippet(text, 'locking'), '<mark>Locking</mark> guide · <mark>Locking</mark> guide · Spinlocks and mutexes. <mark>Locking</mark> rules follow');
  // A breadcrumb's last item, between links, and the page's heading.
  const repeated = card(...menu('Home', 'Docs'), 'Locking guide', ...menu('Edit'), `${'filler '.repeat(30)}.`, 'Locking guide', 'Spinlocks need care.');
  assert.equal(snippet(repeated, 'locking'), '… filler filler filler filler filler filler . <mark>Locking</mark> guide · Spinlocks need care.');
});

test('without a match in the text the snippet is the start of the content, after the menu', () => {
  const text = card(...menu('Home', 'Docs', 'About'), 'The first paragraph of the page.');
  assert.equal(snippet(text, 'absent'), '… The first paragraph of the page.');
});

test('a link without words (a heading\'s permalink sign) is left out of the text', () => {
  const builder = new TextBuilder(1 << 16);
  builder.append('Locking guide');
  builder.openLink(0);
  builder.append('¶');
  builder.closeLink();
  builder.breakBlock();
  builder.append('Spinlocks need care.');
  assert.equal(snippet(CardText.of(builder.finish()), 'locking'), '<mark>Locking</mark> guide · Spinlocks need care.');
});

test('the words a snippet marks are, in text order, the first 64 whose plain form is a query word or starts with a query prefix', () => {
  const vocabulary = ['the', 'The', 'THE', 'thy', 'tHe', 'café', 'Café', 'cafe', 'CAFE', 'cafés', 'straße', 'Strasse', 'über', 'Uber', 'résumé', 'Resume', 'conf', 'Config', 'configuration', 'CONFIGURE', 'cone', 'x', 'ab', 'aB', '日本語', `${'long'.repeat(8)}xx`, `${'long'.repeat(8)}yy`, `${'LONG'.repeat(8)}XX`];
  const queries = ['the', 'cafe', 'café', 'strasse', 'uber', 'resume', 'conf*', 'caf*', 'res*', 'lon*', 'ab', 'x', 'the conf*', 'cafe the ab', `${'long'.repeat(8)}xx`, 'über straße', 'config*', '日本語'];
  const block = fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 40 }).map((words) => words.join(' '));
  fc.assert(
    fc.property(fc.array(fc.tuple(block, fc.boolean()), { minLength: 1, maxLength: 12 }), fc.constantFrom(...queries), (blocks, q) => {
      const text = card(...blocks.map(([words, linked]): string | [string] => (linked ? [words] : words)));
      const marks = highlight(parseQuery(q));
      const marked = [...marks.words];
      const expected = { hits: [] as number[], words: [] as number[] };
      let i = 0;
      for (const [words] of blocks) {
        cutWords(words, (start, end) => {
          const plain = plainForm(exactForm(words.slice(start, end)));
          let which = marked.indexOf(plain);
          if (which < 0) {
            const prefix = marks.prefixes.findIndex((p) => plain.startsWith(p));
            if (prefix >= 0) which = marked.length + prefix;
          }
          if (which >= 0 && expected.hits.length < 64) {
            expected.hits.push(i);
            expected.words.push(which);
          }
          i += 1;
        });
      }
      assert.deepEqual(text.matches(new Marker(marks)), expected);
    }),
  );
});
