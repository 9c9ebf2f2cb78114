/**
 * Anchor texts as votes: the text of a link from a page of another site lands
 * on the target with meta weight 1, the text of a link from the target's own
 * site (its navigation) with weight 0, and each text once per site that
 * gives it, however many of its pages do (indexer/links.ts).
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { META_TYPES } from '../../common/bucket/doc-body.js';
import { CardInfoReader } from '../../common/index/cardinfo.js';
import { CardsReader } from '../../common/index/cards.js';
import { WordIndexReader } from '../../common/index/chains.js';
import { Lexicon } from '../../common/index/lexicon.js';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli } from './site.js';

const html = (body: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<html><body>${body}</body></html>`);
const robots: RouteHandler = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n');

test("an anchor text from another site weighs 1 on its target, one from the target's own site 0, each once per site", async (t) => {
  const state = scratchDir(t);
  const target = await startFixture({
    address: '127.0.0.79',
    routes: {
      '/robots.txt': robots,
      // Three pages of the site call /burrow "wombat" (a menu), one also "warren".
      '/': html('<p>Home. <a href="/burrow">wombat</a> <a href="/a">first</a> <a href="/b">second</a></p>'),
      '/a': html('<p>Page one. <a href="/burrow">wombat</a> <a href="/burrow">warren</a></p>'),
      '/b': html('<p>Page two. <a href="/burrow">wombat</a></p>'),
      '/burrow': html('<p>Where the animals sleep.</p>'),
    },
  });
  t.after(() => target.close());
  const other = await startFixture({
    address: '127.0.0.80',
    routes: {
      '/robots.txt': robots,
      '/': html(`<p>Elsewhere. <a href="${target.origin}/burrow">quokka</a> <a href="/more">more</a></p>`),
      '/more': html(`<p>More. <a href="${target.origin}/burrow">quokka</a></p>`),
    },
  });
  t.after(() => other.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${target.origin}/\n${other.origin}/\n`);
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(crawl.status, 0, crawl.stderr);
  await buildCli(state);

  const dir = join(state, 'index', 'current');
  const info = CardInfoReader.open(join(dir, 'CardInfo'));
  const cards = CardsReader.open(join(dir, 'Cards'));
  const wordIndex = WordIndexReader.open(join(dir, 'WordIndex'));
  t.after(() => [cards, wordIndex].forEach((r) => r.close()));
  let burrow = -1;
  for (let c = 0; c < info.count; c++) if (cards.get(info.get(c).position, c).url === `${target.origin}/burrow`) burrow = c;
  assert.ok(burrow >= 0, 'the target page has a card');
  const lexicon = Lexicon.open(join(dir, 'Lexicon'));
  const anchorWeights = (word: string): number[] => {
    const entry = lexicon.lookup(word);
    assert.ok(entry !== undefined, word);
    const chain = wordIndex.chains(entry.id, entry.refPos).find((c) => c.cardId === burrow);
    assert.ok(chain !== undefined, `${word} on the target`);
    return chain.refs.flatMap((ref) => (ref.kind === 'meta' && META_TYPES[ref.type] === 'ext' ? [ref.weight] : []));
  };
  // Each text once per site that gives it, however many of its pages do.
  assert.deepEqual(anchorWeights('quokka'), [1], 'from another site');
  assert.deepEqual(anchorWeights('wombat'), [0], 'from its own site');
  assert.deepEqual(anchorWeights('warren'), [0], 'another text of its own site');
});
