/**
 * The scale part's documents (bench/scale-corpus.ts): made the same from the
 * same source, cached, written as buckets the indexer reads as a crawl's and
 * as the peers' text file, with the copies and links the module promises,
 * and the URL database a crawl of that size would have.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { arcDir, parseArcAttribute } from '../../common/archive/arc-place.js';
import { readArc } from '../../common/archive/arc-read.js';
import { parseBody } from '../../common/bucket/doc-body.js';
import { parseTextDocument } from '../../gatherer/parse.js';
import { plainText, readDocText } from '../../common/bucket/doc-text.js';
import { BucketReader, bucketFilePath } from '../../common/bucket/file.js';
import { readTextFile } from '../../bench/extract.js';
import { mulberry32 } from '../../bench/queries.js';
import { appendScaleDocuments, ensureScaleCorpus, UNFETCHED_PER_DOC } from '../../bench/scale-corpus.js';
import { readShepherdStatus } from '../../shepherd/status.js';
import { runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli } from '../indexer/site.js';

const bareSearch = join(dirname(fileURLToPath(import.meta.url)), '../../bench/peers/bare-search-run.js');

const WORDS = ['river', 'stone', 'lantern', 'harbour', 'meadow', 'copper', 'violet', 'engine', 'thimble', 'orchard', 'glacier', 'pebble', 'saddle', 'quartz', 'falcon', 'willow'];

/** A text.tsv of 30 pages of sentences, as extract.ts writes one. */
function sourceText(dir: string): string {
  const random = mulberry32(7);
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const lines = Array.from({ length: 30 }, (_, i) => {
    const sentences = Array.from({ length: 40 }, () => `${Array.from({ length: 6 + Math.floor(random() * 10) }, word).join(' ')}.`);
    return `${i}\thttp://127.0.0.2:8480/p${i}.html\tPage ${word()} ${i}\t${sentences.join(' ')}`;
  });
  const file = join(dir, 'text.tsv');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

test('the scale corpus is the same from the same source, cached, and indexed as a crawl would be', async (t) => {
  const root = scratchDir(t);
  const source = sourceText(root);
  const docs = 600;
  const corpus = await ensureScaleCorpus(join(root, 'a'), source, docs, () => undefined);
  const again = await ensureScaleCorpus(join(root, 'b'), source, docs, () => undefined);
  assert.equal(readFileSync(corpus.textFile, 'utf8'), readFileSync(again.textFile, 'utf8'), 'deterministic');
  const made = statSync(corpus.textFile).mtimeMs;
  assert.deepEqual(await ensureScaleCorpus(join(root, 'a'), source, docs, () => undefined), corpus);
  assert.equal(statSync(corpus.textFile).mtimeMs, made, 'made once, then cached');
  assert.equal(corpus.hosts, 10);

  const pages = [...readTextFile(corpus.textFile)];
  assert.equal(pages.length, docs);
  const urls = new Set(pages.map((p) => p.url));
  assert.equal(urls.size, docs, 'every document has a URL of its own');
  // About 3 % are exact copies of an earlier document: same title and text, another URL.
  const byText = new Map<string, number>();
  for (const page of pages) byText.set(`${page.title}\t${page.text}`, (byText.get(`${page.title}\t${page.text}`) ?? 0) + 1);
  const copies = docs - byText.size;
  assert.ok(copies >= 5 && copies <= 40, `${copies} exact copies`);
  const hosts = new Map<string, number>();
  for (const url of urls) hosts.set(new URL(url).host, (hosts.get(new URL(url).host) ?? 0) + 1);
  assert.ok(Math.max(...hosts.values()) > (3 * docs) / corpus.hosts, 'a few hosts hold most pages');

  // The buckets: one per document, in order, each link a document of the corpus with its anchor bracket.
  const reader = BucketReader.open(bucketFilePath(corpus.state));
  t.after(() => reader.close());
  let n = 0;
  for (const stored of reader.buckets()) {
    const bucket = reader.decode(stored);
    const page = pages[n++]!;
    assert.equal(bucket.header.string('U'), page.url);
    const doc = parseBody(bucket.body);
    assert.equal(doc.title, page.title);
    const links = doc.links.filter((l) => l.type === 'R');
    assert.ok(links.length >= 3 && links.every((l) => urls.has(l.url)));
    assert.equal(readDocText(doc.text).filter((token) => token.kind === 'link-open').length, links.length);
    assert.equal(plainText(doc.text).replace(/\s+/g, ' '), page.text);
  }
  assert.equal(n, docs);

  // The URL database: a fetched row per document, ten known but unfetched URLs per document, on the corpus's hosts.
  const status = readShepherdStatus(corpus.state)!;
  assert.equal(status.total, docs * (1 + UNFETCHED_PER_DOC));
  assert.equal(status.urls.new, docs * UNFETCHED_PER_DOC);
  assert.equal(status.total - status.urls.new, docs, JSON.stringify(status.urls));
  assert.ok(status.sites <= corpus.hosts);

  // Each document is an ARC record too, named by its bucket's `a`: `sherlock export cdx` lists one 200 per document,
  // and the page in the record parses (as the gatherer parses a fetch) to the bucket's title and links.
  const cdx = join(root, 'index.cdx');
  const exported = await runCli(['export', 'cdx', '--state', corpus.state, '--out', cdx]);
  assert.equal(exported.status, 0, exported.stderr);
  const lines = readFileSync(cdx, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith(' CDX'));
  assert.equal(lines.length, docs);
  assert.ok(lines.every((l) => l.split(' ')[4] === '200'));
  const first = [...reader.buckets()][0]!;
  const bucket = reader.decode(first);
  const place = parseArcAttribute(bucket.header.string('a'))!;
  const record = [...readArc(join(arcDir(corpus.state), place.file))].find((r) => r.offset === place.offset)!;
  const body = record.content.subarray(record.content.indexOf('\r\n\r\n') + 4);
  const parsed = parseTextDocument({ url: pages[0]!.url, contentType: 'text/html', body });
  const stored = parseBody(bucket.body);
  assert.deepEqual([parsed.title, parsed.links], [stored.title, stored.links]);
  assert.equal(plainText(parsed.text), plainText(stored.text));

  // sherlock indexes the state without a crawl; a document is found by its title.
  const { report } = await buildCli(corpus.state);
  assert.ok(report.cards > docs - copies - 40 && report.cards <= docs, `${report.cards} cards`);
  const probe = pages[100]!;
  const search = await runCli(['search', '--state', corpus.state, '--json', `"${probe.title.split(':')[0]!}"`]);
  assert.equal(search.status, 0, search.stderr);
  assert.ok((JSON.parse(search.stdout) as { total: { value: number } }).total.value > 0);

  // The bare search loop (bench/peers/bare-search-run.ts), the scale table's floor, counts what sherlock counts for exact words and phrases.
  const exactQueries = ['="river stone"', '=river =stone', '="stone river willow"', '=copper ="meadow glacier"'];
  const queryFile = join(root, 'queries.tsv');
  writeFileSync(queryFile, exactQueries.map((q) => `floor\t${q.replace(/=/g, '')}`).join('\n') + '\n');
  const floor = execFileSync(process.execPath, [bareSearch, corpus.state, queryFile, '2', '1'], { encoding: 'utf8' });
  const { latenciesMs, matches } = JSON.parse(floor) as { latenciesMs: number[]; matches: number[] };
  assert.equal(latenciesMs.length, 2 * exactQueries.length);
  for (const [i, q] of exactQueries.entries()) {
    // A page this large leaves nothing to prune: the total is exact ("eq"), not the cards scored.
    const found = await runCli(['search', '--state', corpus.state, '--json', '--offset', '100', '--limit', '100', q]);
    assert.equal(found.status, 0, found.stderr);
    const { total } = JSON.parse(found.stdout) as { total: { value: number; relation: string } };
    assert.deepEqual([matches[i], 'eq'], [total.value, total.relation], q);
  }
  assert.ok(matches[0]! > 0 && matches[0]! < matches[1]!, `a phrase is rarer than its words together: ${matches.join(' ')}`);

  // What the rebuild under load appends (scale-swap.ts): new documents after the corpus's, linking into it, which the next build takes.
  const added = await appendScaleDocuments(corpus, corpus.state, 6);
  assert.equal(added.length, 6);
  assert.ok(added.every((url) => !urls.has(url)), 'new URLs');
  const appended = [...reader.buckets()].slice(docs).map((b) => reader.decode(b));
  assert.deepEqual(appended.map((b) => b.header.string('U')), added);
  assert.ok(appended.every((b) => parseBody(b.body).links.filter((l) => l.type === 'R').every((l) => urls.has(l.url))));
  const rebuilt = await buildCli(corpus.state);
  assert.ok(rebuilt.report.cards > report.cards && rebuilt.report.cards <= report.cards + 6, `${report.cards} → ${rebuilt.report.cards} cards`);
});
