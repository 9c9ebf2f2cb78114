/**
 * PDFs and office files end to end through `sherlock crawl` and `sherlock
 * index build` (issue 30): a page links Debian's maint-guide PDF, a docx and
 * a spreadsheet written by pandoc and LibreOffice (test/fixtures/office),
 * an encrypted PDF (qpdf) and a zip bomb served as a docx. The documents are
 * found by words of their text and titles and by `type:`, their links are
 * stored; the encrypted one and the bomb are recorded with the outcome that
 * says why, and the crawl finishes.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { readGatherStatus } from '../../common/gather/status.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { CODE } from '../../gatherer/outcome.js';
import { searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { parseQuery } from '../../searcher/query.js';
import { renderBody } from '../../searcher/render.js';
import { runCli } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { MiB } from '../helpers/memory.js';
import { repoRoot, scratchDir } from '../helpers/paths.js';
import { deflatedEntry, zipOf } from '../helpers/zip.js';
import { buildCli } from '../indexer/site.js';

const GUIDE = '/usr/share/doc/maint-guide/maint-guide.en.pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

test('PDFs and office files are crawled and searchable; an encrypted PDF and a zip bomb are recorded, the crawl goes on', async (t) => {
  const state = scratchDir(t);
  const encrypted = join(state, 'locked.pdf');
  execFileSync('qpdf', ['--encrypt', 'secret', 'owner', '256', '--', GUIDE, encrypted]);
  const office = (name: string) => readFileSync(join(repoRoot, 'test', 'fixtures', 'office', name));
  const bomb = zipOf([
    deflatedEntry('[Content_Types].xml', '<Types/>'),
    deflatedEntry('_rels/.rels', '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
    deflatedEntry('word/document.xml', Buffer.alloc(64 * MiB, 0x20)),
  ]);
  const answer = (type: string, body: Buffer | string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': type }).end(body);
  const site = await startFixture({
    address: '127.0.0.93',
    routes: {
      '/': answer('text/html', '<html><head><title>Library</title></head><body><a href="/guide.pdf">the guide</a> <a href="/report.docx">report</a> <a href="/census.xlsx">census</a> <a href="/locked.pdf">locked</a> <a href="/bomb.docx">bomb</a></body></html>'),
      '/guide.pdf': answer('application/pdf', readFileSync(GUIDE)),
      '/report.docx': answer(DOCX, office('sample.docx')),
      '/census.xlsx': answer(XLSX, office('census.xlsx')),
      '/locked.pdf': answer('application/pdf', readFileSync(encrypted)),
      '/bomb.docx': answer(DOCX, bomb),
    },
  });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s', '--set', 'gatherer.max_decoded_size=16MiB']);
  assert.equal(run.status, 0, run.stderr);
  // The gatherer counts them as recorded (its status and fetches_total), not as the 200s they were fetched as.
  assert.deepEqual(readGatherStatus(state)?.errors, { unparseable: 1, too_large: 1 });

  const codes = new Map(storedObjects(state).map((o) => [new URL(o.url).pathname, o]));
  assert.equal(codes.get('/guide.pdf')?.code, CODE.ok);
  assert.equal(codes.get('/report.docx')?.code, CODE.ok);
  assert.equal(codes.get('/locked.pdf')?.code, CODE.unparseable);
  assert.match(codes.get('/locked.pdf')!.bucket.header.string('!') ?? '', /^2307 encrypted PDF: it needs a password: stored, not parsed$/);
  assert.equal(codes.get('/bomb.docx')?.code, CODE.tooLarge);
  // The guide's links are stored for the shepherd, as a page's are.
  assert.ok(codes.get('/guide.pdf')!.bucket.body.all('R').map((r) => r.toString('utf8')).includes('http://www.debian.org/doc/manuals/debian-reference/'));

  await buildCli(state);
  const name = currentVersion(indexDirectory(state))!;
  const version = IndexVersion.open(join(indexDirectory(state), name), name);
  try {
    const search = async (q: string) => (await searchVersion(version, { query: parseQuery(q), offset: 0, limit: 10, filters: {}, sort: 'relevance' }, new AbortController().signal)).hits.map((h) => new URL(h.url).pathname);
    assert.deepEqual(await search('dh_make debhelper'), ['/guide.pdf']);
    assert.deepEqual(await search('type:pdf maintainers'), ['/guide.pdf']);
    assert.deepEqual(await search('zeppelin'), ['/report.docx']);
    assert.deepEqual(await search('title:quokka'), ['/report.docx']);
    assert.deepEqual(await search('desiccated coconut'), ['/report.docx'], 'a footnote');
    assert.deepEqual(await search('type:office marigold'), (await search('marigold')).filter((p) => p !== '/'));
    assert.ok((await search('supplies')).includes('/census.xlsx'), JSON.stringify(await search('supplies')));
    // A PDF's hit names the page of its snippet's match: pdftotext finds each of these words on that page of the guide only.
    const page = async (q: string) => (await searchVersion(version, { query: parseQuery(q), offset: 0, limit: 1, filters: {}, sort: 'relevance' }, new AbortController().signal)).hits[0]?.page;
    for (const [word, n] of [['digitally', 9], ['annoyance', 41], ['unpatched', 42]] as const) {
      assert.match(execFileSync('pdftotext', ['-f', String(n), '-l', String(n), GUIDE, '-'], { encoding: 'utf8' }).toLowerCase(), new RegExp(word));
      assert.equal(await page(word), n, word);
    }
    assert.equal(await page('zeppelin'), undefined, 'an office file has no pages');
    const shown = renderBody({ q: 'annoyance', page: 1, site: [], type: [], lang: [], byDate: false }, { ...(await searchVersion(version, { query: parseQuery('annoyance'), offset: 0, limit: 1, filters: {}, sort: 'relevance' }, new AbortController().signal)), took_ms: 1 });
    const pages = Number(/^Pages:\s+(\d+)$/m.exec(execFileSync('pdfinfo', [GUIDE], { encoding: 'utf8' }))![1]);
    assert.match(shown, new RegExp(`${pages} pages · <a class="page"`), 'the page count pdfinfo gives');
    assert.match(shown, new RegExp(`<a class="page" href="${site.origin.replace(/\./g, '\\.')}/guide\\.pdf#page=41">page 41</a>`));
  } finally {
    version.retire();
  }
});
