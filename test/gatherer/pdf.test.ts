/**
 * PDFs (gatherer/pdf.ts) as Debian ships them (maint-guide's, written by
 * DocBook's dblatex; shared-mime-info's spec): text in reading order that
 * agrees with poppler's pdftotext word for word, paragraphs as blocks,
 * headings typed, the Info title, URI links with the text over them as
 * anchor text; an encrypted PDF (qpdf), a cut one and bytes that are no PDF
 * are refused with a message saying why.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { wordAgreement } from '../../bench/pdf-words.js';
import { plainText, plainTextAndAnchors, readDocText, TextBuilder, WORD_TYPE } from '../../common/bucket/doc-text.js';
import { MAX_TEXT_BYTES, parseDocument } from '../../gatherer/parse.js';
import { parsePdf, PdfRefused } from '../../gatherer/pdf.js';
import { scratchDir } from '../helpers/paths.js';

const GUIDE = '/usr/share/doc/maint-guide/maint-guide.en.pdf';
const MIME_SPEC = '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf';
const URL_ = 'http://127.0.0.1/doc/guide.pdf';

async function parse(file: string | Buffer) {
  const text = new TextBuilder(MAX_TEXT_BYTES);
  const fields = await parsePdf(typeof file === 'string' ? readFileSync(file) : file, URL_, text);
  return { fields, text: text.finish() };
}

test("the maint-guide's text agrees with pdftotext's on at least 95 % of its words, its title and links are read", async () => {
  const { fields, text } = await parse(GUIDE);
  const reference = execFileSync('pdftotext', ['-enc', 'UTF-8', GUIDE, '-'], { maxBuffer: 64 << 20 }).toString('utf8');
  const { agreement, words } = wordAgreement(reference, plainText(text));
  assert.ok(words > 20_000, `${words} words`);
  assert.ok(agreement >= 0.95, `${(agreement * 100).toFixed(1)} % of pdftotext's words`);
  assert.equal(fields.title, "Debian New Maintainers' Guide");
  assert.equal(fields.pages, 63);
  const links = fields.links.map((l) => l.url);
  assert.ok(links.includes('http://www.debian.org/doc/manuals/debian-reference/'), links.slice(0, 10).join(' '));
  assert.ok(fields.links.every((l) => l.type === 'R'));
  // The text over a link annotation is its anchor text.
  const { anchors } = plainTextAndAnchors(text);
  const reference_ = links.indexOf('http://www.debian.org/doc/manuals/debian-reference/');
  assert.match(anchors.get(reference_) ?? '', /Debian Reference/);
});

test('paragraphs are blocks, headings are typed by their font size, a page is read in order', async () => {
  const { text } = await parse(GUIDE);
  const tokens = readDocText(text);
  const headings = tokens.filter((t) => t.kind === 'text' && (t.type === WORD_TYPE.heading1 || t.type === WORD_TYPE.heading2)).map((t) => (t.kind === 'text' ? t.text : ''));
  assert.ok(headings.some((h) => /Getting started The Right Way/.test(h)), headings.slice(0, 12).join(' | '));
  const blocks: string[] = [''];
  for (const t of tokens) {
    if (t.kind === 'break') blocks.push('');
    else if (t.kind === 'text') blocks[blocks.length - 1] += t.text;
  }
  // A paragraph set on several lines is one block, its lines joined by spaces.
  const paragraph = blocks.find((b) => b.startsWith('Please note that you cannot become an official Debian Developer'));
  assert.ok(paragraph?.includes('because it takes more than technical skill. Please do not be discouraged by this.'), paragraph);
  assert.ok(blocks.length > 1000, `${blocks.length} blocks`);
});

test('another tool’s PDF: the shared MIME-info spec', async () => {
  const { fields, text } = await parse(MIME_SPEC);
  const reference = execFileSync('pdftotext', ['-enc', 'UTF-8', MIME_SPEC, '-']).toString('utf8');
  assert.ok(wordAgreement(reference, plainText(text)).agreement >= 0.95);
  assert.match(plainText(text), /glob/);
  assert.ok(fields.pages > 10);
});

test('an encrypted PDF, a PDF cut short and bytes that are no PDF are refused, saying why', async (t) => {
  const dir = scratchDir(t);
  const encrypted = join(dir, 'encrypted.pdf');
  execFileSync('qpdf', ['--encrypt', 'secret', 'owner', '256', '--', GUIDE, encrypted]);
  await assert.rejects(parse(encrypted), (err) => err instanceof PdfRefused && err.message === 'encrypted PDF: it needs a password');
  // Encrypted with an owner password only, it opens for anyone, as in every reader.
  const ownerOnly = join(dir, 'owner-only.pdf');
  execFileSync('qpdf', ['--encrypt', '', 'owner', '256', '--', GUIDE, ownerOnly]);
  assert.match(plainText((await parse(ownerOnly)).text), /dh_make/);
  const guide = readFileSync(GUIDE);
  await assert.rejects(parse(guide.subarray(0, guide.length >> 1)), (err) => err instanceof PdfRefused && /^not a readable PDF: /.test(err.message));
  await assert.rejects(parse(Buffer.from('%PDF-1.4\nnothing else at all')), PdfRefused);
});

test('a PDF served without a Content-Type is told by its first bytes; a refused one is recorded as unparseable', async () => {
  const doc = await parseDocument({ url: URL_, body: readFileSync(MIME_SPEC) }, 1 << 20);
  assert.equal(doc.kind, 'pdf');
  assert.ok(doc.detectedLanguage === 'en', doc.detectedLanguage);
  const refused = await parseDocument({ url: URL_, contentType: 'application/pdf', body: Buffer.from('%PDF-1.4\nbroken') }, 1 << 20);
  assert.equal(refused.kind, 'other');
  assert.equal(refused.refused?.outcome, 'unparseable');
});
