/**
 * Hostile PDFs and office files through the gatherer's parse pool
 * (gatherer/parse-pool.ts): a compression bomb of a content stream, a page
 * tree of 200,000 pages, arrays nested 100,000 deep, an encrypted PDF
 * (qpdf), a PDF cut in half, a zip bomb disguised as a docx. Each is bounded
 * by the pool's caps or refused by its parser, recorded with the outcome
 * that says why, and the pool still parses the next document.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ParsePool } from '../../gatherer/parse-pool.js';
import { MiB, peakRssGrowth } from '../helpers/memory.js';
import { scratchDir } from '../helpers/paths.js';
import { flateBomb, manyPagesPdf, onePagePdf } from '../helpers/pdf.js';
import { deflatedEntry, zipOf } from '../helpers/zip.js';

const GUIDE = '/usr/share/doc/maint-guide/maint-guide.en.pdf';
const PDF = [['Content-Type', 'application/pdf']] as const;
const DOCX = [['Content-Type', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document']] as const;
const LIMITS = { time: 6000, memory: 384 * MiB };

test('hostile PDFs and office files are stopped at the caps or refused, and the pool goes on', async (t) => {
  const pool = new ParsePool(1, LIMITS);
  t.after(() => pool.close());
  const parse = (body: Buffer, headers: ReadonlyArray<readonly [string, string]> = PDF) => pool.parse(body, { url: 'http://127.0.0.1/doc', headers, maxDecodedSize: 32 * MiB });

  const bomb = onePagePdf('', { contents: await flateBomb(4096, 'after the bomb') });
  const { result: bombed, growth } = await peakRssGrowth(() => parse(bomb));
  assert.equal(bombed.parsed?.refused?.outcome, 'too_large', JSON.stringify(bombed.parsed?.refused));
  assert.match(bombed.parsed!.refused!.message, /memory cap of 384 MiB/);
  // Over the cap by what one step of pdf.js's buffer growth adds before the next look, never by the 4 GiB.
  assert.ok(growth < LIMITS.memory + 1024 * MiB, `RSS grew ${Math.round(growth / MiB)} MiB`);
  t.diagnostic(`bomb: RSS grew ${Math.round(growth / MiB)} MiB`);

  const pages = await parse(manyPagesPdf(200_000));
  assert.equal(pages.parsed?.refused?.outcome, 'unparseable', JSON.stringify(pages.parsed?.refused));
  assert.match(pages.parsed!.refused!.message, /time cap of 6 s/);

  const deep = 100_000;
  const nested = await parse(onePagePdf('nested words', { page: `/Deep ${'['.repeat(deep)}${']'.repeat(deep)}` }));
  // pdf.js runs out of stack on the page's dictionary: the page is lost, the document is not.
  assert.equal(nested.parsed?.kind, 'pdf', JSON.stringify(nested.parsed?.refused));

  const dir = scratchDir(t);
  const encrypted = join(dir, 'encrypted.pdf');
  execFileSync('qpdf', ['--encrypt', 'secret', 'owner', '256', '--', GUIDE, encrypted]);
  const locked = await parse(readFileSync(encrypted));
  assert.deepEqual(locked.parsed?.refused, { outcome: 'unparseable', message: 'encrypted PDF: it needs a password' });

  const guide = readFileSync(GUIDE);
  const cut = await parse(guide.subarray(0, guide.length >> 1));
  assert.equal(cut.parsed?.refused?.outcome, 'unparseable');
  assert.match(cut.parsed!.refused!.message, /^not a readable PDF: /);

  const zipBomb = zipOf([
    deflatedEntry('[Content_Types].xml', '<Types/>'),
    deflatedEntry('_rels/.rels', '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
    deflatedEntry('word/document.xml', Buffer.alloc(64 * MiB, 0x20)),
  ]);
  const zipped = await parse(zipBomb, DOCX);
  assert.equal(zipped.parsed?.refused?.outcome, 'too_large', JSON.stringify(zipped.parsed?.refused));

  const fine = await parse(onePagePdf('parsed after all that'));
  assert.equal(fine.parsed?.kind, 'pdf');
  assert.equal(fine.parsed?.refused, undefined);
});

test('a worker over its memory cap leaves and the document is too_large, one that cannot start meets the time cap; a second document thread is no reason to refuse', async (t) => {
  // 24 MiB is less than a document worker holds parsing a PDF (pdf.js, the parsers, the language tables): it leaves on its first look.
  const small = new ParsePool(1, { time: 30_000, memory: 24 * MiB });
  t.after(() => small.close());
  const over = await small.parse(onePagePdf('too big a worker'), { url: 'http://127.0.0.1/doc', headers: PDF, maxDecodedSize: 32 * MiB });
  assert.deepEqual(over.parsed?.refused, { outcome: 'too_large', message: 'parse went over its memory cap of 24 MiB' });

  // 12 MiB cannot even load the worker's modules: V8 stops it before it takes the task, which meets its time cap; the process goes on.
  const tiny = new ParsePool(1, { time: 2_000, memory: 12 * MiB });
  t.after(() => tiny.close());
  const starved = await tiny.parse(onePagePdf('no worker at all'), { url: 'http://127.0.0.1/doc', headers: PDF, maxDecodedSize: 32 * MiB });
  assert.deepEqual(starved.parsed?.refused, { outcome: 'unparseable', message: 'parse went over its time cap of 2 s' });

  // Two threads, each starting its worker while the other parses: neither document is charged with the other's memory.
  const two = new ParsePool(2, { time: 60_000, memory: 512 * MiB });
  t.after(() => two.close());
  const guide = readFileSync(GUIDE);
  const results = await Promise.all([guide, onePagePdf('small'), guide, onePagePdf('small again')].map((body) => two.parse(body, { url: 'http://127.0.0.1/doc', headers: PDF, maxDecodedSize: 32 * MiB })));
  assert.deepEqual(
    results.map((r) => r.parsed?.refused),
    [undefined, undefined, undefined, undefined],
  );
});
