/**
 * Inject batches prepared ahead (shepherd/url-batch*.ts, UrlDb.injectAll):
 * what prepareBatch computes for each URL, and that batches prepared by the
 * worker thread while the previous one is inserted leave exactly the rows,
 * ids and sites that inject() batch after batch leaves.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';
import { canonicalUrl, footprint, siteFootprint, urlParts } from '../../common/url.js';
import { SiteHalves, prepareBatch } from '../../shepherd/url-batch.js';
import { UrlDb, type InjectBatch, type InjectEntry } from '../../shepherd/urldb.js';
import { scratchDir } from '../helpers/paths.js';

const T0 = 1_700_000_000;

test('prepareBatch keeps the valid entries in order with their footprints, sites in the order met, and a hash order', () => {
  const urls = ['http://B.example/x', 'ftp://c.example/', 'https://a.example:8443/p?q=1', 'rel/page', 'http://b.example/y#frag', 'http://b.example/x', 'http://d.example/'];
  const depths = Float64Array.from([0, 0, 2, 1, 3, 1, 1.5]);
  const sources = [undefined, undefined, undefined, 'http://a.example/dir/', undefined, undefined, undefined];
  const batch = prepareBatch({ urls, depths, sources }, new SiteHalves());
  assert.deepEqual([...batch.from], [0, 2, 3, 4, 5], 'ftp and a depth of 1.5 refused');
  assert.equal(batch.refused, 2);
  assert.deepEqual(batch.urls, ['http://b.example/x', 'https://a.example:8443/p?q=1', 'http://a.example/dir/rel/page', 'http://b.example/y', 'http://b.example/x']);
  assert.deepEqual([...batch.depths], [0, 2, 1, 3, 1]);
  assert.deepEqual(batch.sites, ['http://b.example', 'https://a.example:8443', 'http://a.example']);
  assert.deepEqual([...batch.siteOf], [0, 1, 2, 0, 0]);
  batch.sites.forEach((site, s) => assert.deepEqual(Buffer.from(batch.halves.subarray(8 * s, 8 * s + 8)), siteFootprint(`${site}/`)));
  batch.urls.forEach((url, i) => assert.deepEqual(Buffer.from(batch.footprints.subarray(16 * i, 16 * i + 16)), footprint(url), url));
  const mix = (i: number) => Buffer.from(batch.footprints.subarray(16 * i + 8, 16 * i + 14)).readUIntBE(0, 6);
  const expected = batch.urls.map((_, i) => i).sort((a, b) => mix(a) - mix(b) || a - b);
  assert.deepEqual([...batch.order], expected);
  // The two copies of http://b.example/x tie; the first given goes first.
  assert.ok(batch.order.indexOf(0) < batch.order.indexOf(4));
});

/** Every row of the tables inject writes, in rowid order. */
function rows(state: string): unknown[] {
  const db = new Database(join(state, 'shepherd', 'urls.sqlite'), { readonly: true });
  try {
    return ['sites', 'urls', 'meta'].flatMap((table) => db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).raw().all());
  } finally {
    db.close();
  }
}

/** Batches with everything inject weighs: duplicates within and across batches, bad URLs, relative ones, non-ASCII ones, depths past max_depth, sites past max_urls. */
function batches(): InjectBatch[] {
  const out: InjectBatch[] = [];
  let k = 0;
  for (let b = 0; b < 4; b++) {
    const entries: InjectEntry[] = [];
    for (let i = 0; i < 2500; i++, k++) {
      const s = k % 37;
      const site = `http://s${s}.example${s % 5 === 0 ? ':8080' : ''}`;
      const n = (k * 31) % 250;
      if (k % 97 === 0) entries.push({ url: `ftp://bad.example/${k}` });
      else if (k % 89 === 0) entries.push({ url: `page-${n}.html`, source: `${site}/dir/`, depth: 2 });
      // Non-ASCII crosses to the worker as UTF-8 (2 and 4 bytes a character here).
      else if (k % 83 === 0) entries.push({ url: `${site}/café/${n}/😀`, depth: 1 });
      else entries.push({ url: `${site}/p/${n}?x=${n % 3}`, depth: k % 7 });
    }
    out.push({ entries, now: T0 + 60 * b });
  }
  return out;
}

test('injectAll, its next batch prepared in a worker thread, leaves the same rows, ids and sites as inject() batch by batch', (t) => {
  const settings = { max_depth: 5, max_urls_per_site: 200, db_cache: 8 * 2 ** 20 };
  const one = scratchDir(t, 'sherlock-inject-one-');
  const all = scratchDir(t, 'sherlock-inject-all-');
  const byOne = UrlDb.open(one, settings);
  const countsOne = batches().map((batch) => byOne.inject(batch.entries, batch.now));
  byOne.close();
  const byAll = UrlDb.open(all, settings);
  const seen: number[] = [];
  const total = byAll.injectAll(batches(), (counts, batch) => {
    assert.deepEqual(counts, countsOne[seen.length]);
    seen.push(batch.now);
  });
  byAll.close();
  assert.deepEqual(seen, [T0, T0 + 60, T0 + 120, T0 + 180], 'each batch reported in order, inside its transaction');
  const sum = (key: 'added' | 'known' | 'refused') => countsOne.reduce((n, c) => n + c[key], 0);
  assert.deepEqual(total, { added: sum('added'), known: sum('known'), refused: sum('refused') });
  assert.ok(total.known > 0 && total.refused > 0 && total.added > 1000, JSON.stringify(total));
  assert.deepEqual(rows(all), rows(one));
});

test('injectAll of a single batch, or of none, needs no worker thread and counts as inject does', (t) => {
  const db = UrlDb.open(scratchDir(t), { db_cache: 8 * 2 ** 20 });
  t.after(() => db.close());
  assert.deepEqual(db.injectAll([]), { added: 0, known: 0, refused: 0 });
  assert.deepEqual(db.injectAll([{ entries: [{ url: 'http://a.example/' }, { url: 'http://a.example/' }, { url: 'mailto:x@a.example' }], now: T0 }]), { added: 1, known: 1, refused: 1 });
  assert.equal(db.get('http://a.example/')?.siteId, db.getSite(urlParts(canonicalUrl('http://a.example/')).site)?.id);
});
