/**
 * The scale corpus (issue 31): N documents with the statistics of real text,
 * made from the set's extracted pages (`text.tsv`), so that a build of a
 * million documents needs no crawl of a million pages.
 *
 * Sources: each page's text is cut at sentence ends into passages of 40–160
 * words, the paragraphs the documents are made of; the pages' titles are the
 * titles' stems. Document i is a pure function of (seed, i), so any
 * document's title (a link's anchor text) is known without storing it:
 *   - its host: one of N/100 hosts, drawn by a power law (a few hosts hold
 *     most pages, as on the web); its URL http://hK.scale.example/…/i.html;
 *   - its title: a source title and two words of its first passage;
 *   - its text: 2–14 passages, the source passages drawn with a bias to the
 *     first (boilerplate repeats), each a paragraph;
 *   - 3 % are exact copies of an earlier document (its links too) and 3 %
 *     near copies (one passage replaced), under their own URLs, as on the web;
 *   - 4–24 links to earlier or later documents, targets drawn by a power law
 *     (a few are linked from everywhere), each with the first words of its
 *     target's title as anchor text.
 *
 * Written once per (source, N) into bench/work/scale-N/ (a `done` file holds
 * what was made):
 *   corpus/text.tsv               id TAB url TAB title TAB text, for the peers
 *   sherlock/state/gather/arc/    each document as an HTML page in an ARC
 *                                 record of a 200 response, through ArcWriter
 *                                 (gzip level 1, as the gatherer writes)
 *   sherlock/state/gather/buckets the same documents as the gatherer's buckets
 *                                 (header as a 200 fetch's with `a` naming its
 *                                 record, body by documentBody: title,
 *                                 paragraphs, links with their anchor
 *                                 brackets), through BucketWriter
 *   sherlock/state/shepherd/      the URL database: a fetched row per document
 *                                 (its bucket's oid), and UNFETCHED_PER_DOC
 *                                 known but unfetched URLs per document on the
 *                                 same hosts, as a crawl of that size knows
 */

import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { BUCKET_TYPE, BucketObject, encodeBucket } from '../common/bucket/bucket.js';
import { documentBody, noRobots, type Link } from '../common/bucket/doc-body.js';
import { TextBuilder } from '../common/bucket/doc-text.js';
import { BucketWriter, bucketFilePath } from '../common/bucket/file.js';
import { UrlDb, type FetchOutcome } from '../shepherd/urldb.js';
import { ArcWriter } from '../common/archive/arc-write.js';
import { arcAttribute, arcDir } from '../common/archive/arc-place.js';
import { escapeHtml } from '../searcher/render.js';
import { readTextFile } from './extract.js';
import { mulberry32 } from './queries.js';

/** Bumped when the documents made change: a cached corpus of another version is made again. */
const GENERATOR_VERSION = 4;
const MIN_PASSAGE = 40;
const MAX_PASSAGE = 160;
const EXACT_COPIES = 0.03;
const NEAR_COPIES = 0.03;
/** Documents written between two bucket file syncs and two progress lines; URLs per database transaction. */
const BATCH = 50_000;
/** The documents' fetch times start here (2026-01-01), one a second. */
const START = Date.UTC(2026, 0, 1) / 1000;
/** Known URLs not fetched yet per document fetched: a crawl's frontier is mostly unfetched. */
export const UNFETCHED_PER_DOC = 10;

export interface ScaleCorpus {
  dir: string;
  /** The text file the peers index (extract.ts's format). */
  textFile: string;
  /** The set's extracted pages the documents were made from. */
  source: string;
  state: string;
  docs: number;
  hosts: number;
  textBytes: number;
}

interface Sources {
  titles: string[];
  passages: string[];
}

/** The source pages' titles and passages, in file order. */
function readSources(textFile: string): Sources {
  const titles: string[] = [];
  const passages: string[] = [];
  for (const page of readTextFile(textFile)) {
    if (page.title.trim() !== '') titles.push(page.title.trim());
    const words = page.text.split(' ').filter((w) => w !== '');
    for (let at = 0; at < words.length; ) {
      let end = Math.min(words.length, at + MIN_PASSAGE);
      while (end < words.length && end - at < MAX_PASSAGE && !/[.!?]$/.test(words[end - 1]!)) end++;
      if (end - at >= MIN_PASSAGE / 2) passages.push(words.slice(at, end).join(' '));
      at = end;
    }
  }
  if (titles.length === 0 || passages.length === 0) throw new Error(`${textFile}: no titles or passages to make documents of`);
  return { titles, passages };
}

/** A number in [0, n) drawn by a power law: low numbers far more often (u^power). */
function skewed(random: () => number, n: number, power: number): number {
  return Math.min(n - 1, Math.floor(n * random() ** power));
}

interface Doc {
  url: string;
  title: string;
  passages: string[];
  links: number[];
}

class Generator {
  readonly hosts: number;

  constructor(
    private readonly sources: Sources,
    private readonly n: number,
    private readonly seed: number,
  ) {
    this.hosts = Math.max(10, Math.floor(n / 100));
  }

  private random(i: number, stream: number): () => number {
    return mulberry32((this.seed ^ Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(stream, 0x85ebca6b)) >>> 0);
  }

  /** The k-th URL known but not fetched: on a host drawn as documents' are. */
  unfetched(k: number): string {
    const host = skewed(this.random(this.n + k, 1), this.hosts, 3);
    return `http://h${host}.scale.example/new/${(k % 89).toString(36)}/link-${k}.html`;
  }

  url(i: number): string {
    const host = skewed(this.random(i, 1), this.hosts, 3);
    return `http://h${host}.scale.example/${(i % 97).toString(36)}/page-${i}.html`;
  }

  /** The document whose words document i has: itself, or the earlier one it copies. */
  private original(i: number): { of: number; near: boolean } {
    const random = this.random(i, 2);
    const u = random();
    if (i === 0 || u >= EXACT_COPIES + NEAR_COPIES) return { of: i, near: false };
    return { of: Math.floor(random() * i), near: u >= EXACT_COPIES };
  }

  private own(i: number): { title: string; passages: string[] } {
    const random = this.random(i, 3);
    const { titles, passages } = this.sources;
    const count = 2 + Math.floor(12 * random() ** 2);
    const chosen = Array.from({ length: count }, () => passages[skewed(random, passages.length, 1.5)]!);
    const words = chosen[0]!.split(' ');
    const pick = () => words[Math.floor(random() * words.length)]!.replace(/[^\p{L}\p{N}-]/gu, '');
    return { title: `${titles[Math.floor(random() * titles.length)]!}: ${pick()} ${pick()}`.trim(), passages: chosen };
  }

  title(i: number): string {
    return this.own(this.original(i).of).title;
  }

  doc(i: number): Doc {
    const { of, near } = this.original(i);
    const { title, passages } = this.own(of);
    // An exact copy has its original's links too; a near copy one passage and links of its own.
    const random = this.random(near ? i : of, 4);
    if (near) passages[Math.floor(random() * passages.length)] = this.sources.passages[Math.floor(random() * this.sources.passages.length)]!;
    const links = Array.from({ length: 4 + Math.floor(20 * random()) }, () => skewed(random, this.n, 2.5)).filter((t) => t !== of);
    return { url: this.url(i), title, passages, links };
  }
}

/** The anchor text of a link to a document of this title: its first three words. */
function anchorOf(title: string): string {
  return title.split(/\s+/).slice(0, 3).join(' ');
}

/** The page a document is served as: its title, its passages as paragraphs, its links with their anchor texts. */
function pageOf(doc: Doc, targets: readonly string[], anchors: readonly string[]): Buffer {
  const paragraphs = doc.passages.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const links = targets.map((url, n) => `<a href="${escapeHtml(url)}">${escapeHtml(anchors[n]!)}</a>`).join(' ');
  return Buffer.from(`<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(doc.title)}</title></head><body>\n${paragraphs}\n<p>${links}</p>\n</body></html>\n`);
}

/** Where documents go: the state's bucket file and ARC files, and the peers' text lines. */
class DocumentWriter {
  private constructor(
    private readonly generator: Generator,
    private readonly buckets: BucketWriter,
    private readonly arc: ArcWriter,
  ) {}

  static async open(generator: Generator, state: string, arcPrefix: string): Promise<DocumentWriter> {
    const buckets = BucketWriter.open(bucketFilePath(state));
    try {
      return new DocumentWriter(generator, buckets, await ArcWriter.open({ dir: arcDir(state), prefix: arcPrefix, level: 1, clock: () => new Date(START * 1000) }));
    } catch (err) {
      buckets.close();
      throw err;
    }
  }

  /** Writes document i as an ARC record and a bucket; its fetch as the URL database records it, its text line for the peers and the bytes of that text. */
  async write(i: number): Promise<{ fetched: FetchOutcome; line: string; textBytes: number }> {
    const { generator } = this;
    const doc = generator.doc(i);
    const text = new TextBuilder(1 << 20);
    for (const passage of doc.passages) {
      text.append(passage);
      text.breakBlock();
    }
    const links: Link[] = [];
    const anchors: string[] = [];
    for (const target of doc.links) {
      const anchor = anchorOf(generator.title(target));
      text.openLink(links.length);
      text.append(anchor);
      text.closeLink();
      text.append(' ');
      links.push({ type: 'R', url: generator.url(target) });
      anchors.push(anchor);
    }
    const plain = `${doc.passages.join(' ')} ${anchors.join(' ')}`;
    const time = START + (i % 86_400);
    const page = pageOf(doc, links.map((l) => l.url), anchors);
    const md5 = createHash('md5').update(page).digest('hex');
    const response = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${page.length}\r\n\r\n`), page]);
    const written = await this.arc.write({ url: doc.url, ip: '127.0.0.1', date: new Date(time * 1000), contentType: 'text/html; charset=utf-8', content: response });
    const header = new BucketObject();
    for (const [name, value] of [['U', doc.url], ['D', String(time)], ['H', '200'], ['T', 'text/html'], ['E', 'utf-8'], ['C', md5], ['k', '127.0.0.1'], ['a', arcAttribute(written)]] as const) {
      header.add(name, value);
    }
    const body = documentBody({ title: doc.title, text: text.finish(), metas: [], links, robots: noRobots(), detectedLanguage: 'en' });
    const oid = this.buckets.append(BUCKET_TYPE.V33_DEFLATE, encodeBucket(BUCKET_TYPE.V33_DEFLATE, { header, body }));
    return { fetched: { url: doc.url, time, code: 0, status: 200, checksum: md5, oid }, line: `${i}\t${doc.url}\t${doc.title}\t${plain}\n`, textBytes: Buffer.byteLength(plain) };
  }

  sync(): void {
    this.buckets.sync();
  }

  async close(): Promise<void> {
    try {
      await this.arc.close();
    } finally {
      this.buckets.close();
    }
  }
}

const seedOf = (docs: number): number => 0x5ca1e + docs;

/** The corpus of `docs` documents from `sourceText`, made under `workRoot` unless made already. */
export async function ensureScaleCorpus(workRoot: string, sourceText: string, docs: number, log: (line: string) => void): Promise<ScaleCorpus> {
  const dir = join(workRoot, `scale-${docs}`);
  const textFile = join(dir, 'corpus', 'text.tsv');
  const state = join(dir, 'sherlock', 'state');
  const seed = seedOf(docs);
  const stamp = JSON.stringify({ version: GENERATOR_VERSION, docs, seed, source: sourceText, sourceBytes: readFileSync(sourceText).length });
  const done = join(dir, 'done');
  if (existsSync(done)) {
    const made = JSON.parse(readFileSync(done, 'utf8')) as { stamp: string; hosts: number; textBytes: number };
    if (made.stamp === stamp) return { dir, textFile, source: sourceText, state, docs, hosts: made.hosts, textBytes: made.textBytes };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'corpus'), { recursive: true });
  log(`scale: making ${docs.toLocaleString('en')} documents from ${sourceText} in ${dir} (cached)`);
  const generator = new Generator(readSources(sourceText), docs, seed);
  const tsv = openSync(textFile, 'w');
  const db = UrlDb.open(state, { max_urls_per_site: Number.MAX_SAFE_INTEGER, max_depth: 1000 });
  let writer: DocumentWriter | undefined;
  let textBytes = 0;
  const lines: string[] = [];
  const fetched: FetchOutcome[] = [];
  /** The batch's documents into the database: known, then fetched. */
  const record = (): void => {
    db.inject(fetched.map((f) => ({ url: f.url, depth: 1 })), START);
    db.recordResults(fetched.splice(0), START + 86_400);
  };
  try {
    writer = await DocumentWriter.open(generator, state, 'sherlock');
    for (let i = 0; i < docs; i++) {
      const made = await writer.write(i);
      fetched.push(made.fetched);
      lines.push(made.line);
      textBytes += made.textBytes;
      if ((i + 1) % BATCH === 0) {
        writeSync(tsv, lines.splice(0).join(''));
        writer.sync();
        record();
        log(`scale: ${(i + 1).toLocaleString('en')} documents`);
      }
    }
    writeSync(tsv, lines.join(''));
    writer.sync();
    record();
    const unfetched = docs * UNFETCHED_PER_DOC;
    for (let from = 0; from < unfetched; from += BATCH) {
      db.inject(Array.from({ length: Math.min(BATCH, unfetched - from) }, (_, k) => ({ url: generator.unfetched(from + k), depth: 2 })), START);
    }
    log(`scale: ${docs.toLocaleString('en')} URLs fetched and ${unfetched.toLocaleString('en')} known in the URL database`);
  } finally {
    await writer?.close();
    db.close();
    closeSync(tsv);
  }
  writeFileSync(done, JSON.stringify({ stamp, hosts: generator.hosts, textBytes }));
  return { dir, textFile, source: sourceText, state, docs, hosts: generator.hosts, textBytes };
}

/**
 * Appends `count` new documents (numbers corpus.docs and on, made as the
 * corpus's are, linking into it) to the bucket and ARC files of `state`, a
 * copy of the corpus's state: what a crawl adds between two builds. The ARC
 * records go to a file of their own (prefix "added"). Returns their URLs.
 */
export async function appendScaleDocuments(corpus: ScaleCorpus, state: string, count: number): Promise<string[]> {
  const generator = new Generator(readSources(corpus.source), corpus.docs, seedOf(corpus.docs));
  const writer = await DocumentWriter.open(generator, state, 'added');
  const urls: string[] = [];
  try {
    for (let i = corpus.docs; i < corpus.docs + count; i++) urls.push((await writer.write(i)).fetched.url);
    writer.sync();
  } finally {
    await writer.close();
  }
  return urls;
}
