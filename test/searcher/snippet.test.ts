/**
 * Snippets (snippet.ts) from a real `X` text (doc-text.ts TextBuilder): the
 * query's words marked and the rest escaped, windows around the matches
 * with most matched words, and a card matching everywhere looked at only
 * up to its first matches.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { TextBuilder } from '../../common/doc-text.js';
import { parseQuery } from '../../searcher/query.js';
import { CardText, Marker, highlight } from '../../searcher/snippet.js';

function card(...blocks: string[]): CardText {
  const builder = new TextBuilder(1 << 20);
  for (const block of blocks) {
    builder.append(block);
    builder.breakBlock();
  }
  return CardText.of(builder.finish());
}

const snippet = (text: CardText, q: string) => text.snippet(new Marker(highlight(parseQuery(q))));

test('a snippet marks the query\'s words, escapes the rest and shows the windows around matches in text order', () => {
  const text = card('One zebra here.', `${'filler '.repeat(40)}`, 'A <zebra> & a zebra with stripes.');
  assert.equal(
    snippet(text, 'stripes zebra'),
    'One <mark>zebra</mark> here. filler filler filler filler filler filler filler filler filler … filler filler filler filler filler A &#60;<mark>zebra</mark>&#62; &#38; a <mark>zebra</mark> with <mark>stripes</mark>.',
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
