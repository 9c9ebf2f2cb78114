/**
 * The merge and link stages on the crawled site (site.ts): identical pages
 * collapse to one card, a page with one paragraph changed of twenty merges
 * with the original, two pages whose large menu is most of their words do
 * not, the anchor text of a link to a redirect lands on the
 * redirect's target as anchor-text meta refs, a page linked from many pages
 * weighs more than one linked once; Merges, Feedback and Signatures agree
 * with CardInfo and `sherlock index dump` prints them.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { META_TYPES } from '../../common/bucket/doc-body.js';
import { CARD_FLAG, CardInfoReader } from '../../common/index/cardinfo.js';
import { CardsReader } from '../../common/index/cards.js';
import { WordIndexReader } from '../../common/index/chains.js';
import { readFeedback } from '../../common/index/feedback.js';
import { Lexicon } from '../../common/index/lexicon.js';
import { footprint } from '../../common/url.js';
import { NOWHERE, readMerges } from '../../indexer/merge.js';
import { readSignatures } from '../../indexer/signatures.js';
import { runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from './site.js';

test('duplicates collapse, near-duplicates merge, anchor texts follow redirects, links weigh', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: '127.0.0.76' });
  await buildCli(state, ['indexer.workers=2'], ['--keep-work']);
  const dir = join(state, 'index', 'current');
  const info = CardInfoReader.open(join(dir, 'CardInfo'));
  const cards = CardsReader.open(join(dir, 'Cards'));
  const wordIndex = WordIndexReader.open(join(dir, 'WordIndex'));
  t.after(() => [cards, wordIndex].forEach((r) => r.close()));
  const id = new Map<string, number>();
  for (let c = 0; c < info.count; c++) id.set(cards.get(info.get(c).position, c).url.slice(origin.length), c);
  const card = (path: string) => id.get(path)!;
  const flags = (path: string) => info.get(card(path)).flags;
  const merges = readMerges(join(dir, 'Merges'));

  // Exact and near duplicates: one card of each pair is kept (merged), the other flagged dup and pointing at it.
  for (const [a, b] of [['/twin-a', '/twin-b'], ['/long', '/long-edit']] as const) {
    const dups = [a, b].filter((p) => (flags(p) & CARD_FLAG.dup) !== 0);
    assert.equal(dups.length, 1, `${a} ${b}: one is a duplicate`);
    const kept = dups[0] === a ? b : a;
    assert.notEqual(flags(kept) & CARD_FLAG.merged, 0, `${kept} is the primary`);
    assert.equal(merges[card(dups[0]!)], card(kept));
    assert.equal(merges[card(kept)], card(kept));
  }
  // The shorter URL wins the tie between equal twins.
  assert.equal(flags('/long') & CARD_FLAG.dup, 0);
  for (const path of ['/', '/accents', '/popular', '/lonely', '/menu-a', '/menu-b']) assert.equal(flags(path) & (CARD_FLAG.dup | CARD_FLAG.merged), 0, `${path} stands alone`);
  assert.equal(merges[card('/moved')], card('/accents'), 'a redirect points at its target');
  assert.equal(merges[card('/hidden')], NOWHERE);

  // "zebra" is the anchor text of a link (on the home page) to /moved, which redirects to /accents.
  const lexicon = Lexicon.open(join(dir, 'Lexicon'));
  const zebra = lexicon.lookup('zebra')!;
  const chains = wordIndex.chains(zebra.id, zebra.refPos);
  assert.deepEqual(chains.map((c) => c.cardId), [card('/'), card('/accents')]);
  const onTarget = chains[1]!.refs;
  assert.ok(onTarget.length > 0 && onTarget.every((ref) => ref.kind === 'meta' && META_TYPES[ref.type] === 'ext'), JSON.stringify(onTarget));
  // From a page of the same site: navigation, meta weight 0 (another site's would weigh 1).
  assert.ok(onTarget.every((ref) => ref.kind === 'meta' && ref.weight === 0), JSON.stringify(onTarget));
  // Every anchor word lands: "desserts" of "about desserts".
  const desserts = lexicon.lookup('desserts')!;
  assert.ok(wordIndex.chains(desserts.id, desserts.refPos).some((c) => c.cardId === card('/accents') && c.refs.some((r) => r.kind === 'meta' && META_TYPES[r.type] === 'ext')));

  // Weights: five pages link to /popular, one to /lonely.
  assert.ok(info.get(card('/popular')).weight > info.get(card('/lonely')).weight, `${info.get(card('/popular')).weight} > ${info.get(card('/lonely')).weight}`);
  assert.ok(info.get(card('/lonely')).weight > 0);

  // Feedback: one record per card, as CardInfo says, under the URL's footprint.
  const feedback = [...readFeedback(join(dir, 'Feedback'))];
  assert.equal(feedback.length, info.count);
  for (const record of feedback) {
    const own = info.get(record.cardId);
    assert.equal(record.flags, own.flags);
    assert.equal(record.weight, own.weight);
  }
  assert.ok(feedback[card('/twin-b')]!.footprint.equals(footprint(`${origin}/twin-b`)));
  assert.equal([...readSignatures(join(dir, 'Signatures'))].length, info.count);

  for (const name of ['Merges', 'Feedback', 'Signatures', 'AnchoredPostings']) {
    const run = await runCli(['index', 'dump', join(dir, name)]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim().split('\n').length > 0, true, name);
  }
  const dumped = await runCli(['index', 'dump', join(dir, 'Merges')]);
  assert.match(dumped.stdout, new RegExp(`^${card('/moved')} ${card('/accents')}$`, 'm'));
});
