/**
 * Images end to end (issue 30): pages show images with alt texts; after
 * `sherlock crawl` and `sherlock index build` each image is a card of type
 * image, never fetched, found by its alt texts (from every page showing it)
 * and by the anchor texts of links to it, naming the page it was seen on.
 * An image without an alt text, one shown only on a noindex page and one
 * that is a crawled page already get no image card; two images with the same
 * alt text stay two.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { parseQuery } from '../../searcher/query.js';
import { renderBody } from '../../searcher/render.js';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli } from '../indexer/site.js';

const ALBUM = 60;
const html = (body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);

test('images are searchable by their alt texts and the anchor texts of links to them, with the page they are on', async (t) => {
  const state = scratchDir(t);
  const requested: string[] = [];
  const site = await startFixture({
    address: '127.0.0.94',
    routes: {
      '/': html('<html><head><title>Gallery</title></head><body><a href="/walk">walk</a> <a href="/river">river</a> <a href="/hidden">hidden</a> <a href="/album">album</a></body></html>'),
      '/album': html(`<html><head><title>Album</title></head><body>${Array.from({ length: ALBUM }, (_, i) => `<img src="/album/${i}.png" alt="album picture number ${i} of the summer">`).join('')}</body></html>`),
      '/walk': html(`<html><head><title>A walk</title></head><body><p>We walked to the old town.</p>
        <img src="/img/bridge.jpg" alt="Stone bridge at dusk"> <img src="/img/bridge.jpg" alt="not this one: an image keeps a page's first alt">
        <img src="/img/logo.png" alt="Acme logo"> <img src="/img/spacer.gif"> <img src="/river" alt="river page as an image"></p></body></html>`),
      '/river': html(`<html><head><title>The river</title></head><body><p>Boats pass under it.</p>
        <img src="/img/bridge.jpg" alt="Old viaduct over the river"> <img src="/img/acme-logo-2.png" alt="Acme logo">
        <a href="/img/bridge.jpg">full-size photograph</a></p></body></html>`),
      '/hidden': html('<html><head><title>Hidden</title><meta name="robots" content="noindex"></head><body><img src="/img/secret.png" alt="classified diagram"></body></html>'),
      '/img/bridge.jpg': (req, res) => {
        requested.push(req.url!);
        res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(Buffer.alloc(100));
      },
    },
  });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(run.status, 0, run.stderr);
  const { report } = await buildCli(state);
  assert.equal((report as { images?: number }).images, 3 + ALBUM, 'bridge.jpg, logo.png, acme-logo-2.png and the album');

  const name = currentVersion(indexDirectory(state))!;
  const version = IndexVersion.open(join(indexDirectory(state), name), name);
  t.after(() => version.retire());
  const search = async (q: string) => searchVersion(version, { query: parseQuery(q), offset: 0, limit: 10, filters: {}, sort: 'relevance' }, new AbortController().signal);
  const paths = async (q: string) => (await search(q)).hits.map((h) => new URL(h.url).pathname).sort();

  // Both pages' alt texts find the one card; its title is the first met, its page the one that said it.
  assert.deepEqual(await paths('dusk'), ['/img/bridge.jpg', '/walk'], "an alt text is its page's words too");
  const dusk = (await search('type:image dusk')).hits;
  assert.deepEqual(dusk.map((h) => new URL(h.url).pathname), ['/img/bridge.jpg']);
  const bridge = dusk[0]!;
  assert.equal(bridge.type, 'image/jpeg');
  assert.deepEqual((await search('type:image viaduct')).hits.map((h) => h.url), [bridge.url]);
  assert.ok(['Stone bridge at dusk', 'Old viaduct over the river'].includes(bridge.title));
  assert.equal(new URL(bridge.referrer!).pathname, bridge.title === 'Stone bridge at dusk' ? '/walk' : '/river');
  assert.equal(bridge.archive, undefined, 'never fetched for its card');
  assert.deepEqual(await paths('"not this one"'), ['/walk'], "a page's second alt for the same image stays the page's words only");
  // The anchor text of a link to the image finds it too.
  assert.deepEqual(await paths('type:image photograph'), ['/img/bridge.jpg']);
  // Same alt text, two images: two cards, not duplicates of each other.
  assert.deepEqual(await paths('type:image acme logo'), ['/img/acme-logo-2.png', '/img/logo.png']);
  assert.deepEqual(await paths('type:image -album'), ['/img/acme-logo-2.png', '/img/bridge.jpg', '/img/logo.png']);
  assert.deepEqual((await search('type:image')).total, { value: 3 + ALBUM, relation: 'eq' });
  // A noindex page shows nothing; a page used as an image stays a page; an image without alt text has no card.
  assert.deepEqual(await paths('classified'), []);
  assert.deepEqual(await paths('type:image river page'), []);
  assert.deepEqual(await paths('spacer'), []);
  const facets = (await search('(logo OR viaduct OR walked) -album')).facets.type;
  assert.equal(facets.find((f) => f.value.startsWith('image/'))?.count, 3, 'the type facet counts the images as one type');

  // The results page names the page an image is on and no size.
  const page = renderBody({ q: 'type:image viaduct', page: 1, site: [], type: [], lang: [], byDate: false }, { ...(await search('type:image viaduct')), took_ms: 1 });
  assert.match(page, new RegExp(`on <a class="referrer" href="${bridge.referrer!.replace(/[.?]/g, '\\$&')}">`));
  assert.doesNotMatch(page, /\d B ·/);
  assert.ok(requested.length <= 1, 'the image is fetched at most once, as the target of a link, not for its card');

  // The references are held within an eighth of the memory budget: past it, images are left out with a warning, and the build goes on.
  const small = await buildCli(state, ['indexer.memory_budget=64KiB']);
  const images = (small.report as { images?: number }).images!;
  assert.ok(images > 0 && images < 3 + ALBUM, `${images} image cards within 8 KiB`);
  assert.match(small.run.stderr, /images left out of the index/);
});
