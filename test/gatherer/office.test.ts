/**
 * Office documents (gatherer/office.ts): files written by pandoc and
 * LibreOffice (test/fixtures/office/README.md) give their text in reading
 * order, headings typed, title, metas, language and hyperlinks with their
 * anchor text bracketed; zip bombs (a part declaring 1 GiB, a part lying
 * about its size, parts adding up past the budget, too many entries) are
 * refused as too large with bounded memory; broken, foreign and encrypted
 * files are refused with a message saying why.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { createDeflateRaw } from 'node:zlib';
import { plainTextAndAnchors, readDocText, TextBuilder, WORD_TYPE } from '../../common/bucket/doc-text.js';
import { OFFICE_TYPES } from '../../common/index/cardinfo.js';
import { MAX_ZIP_ENTRIES, OfficeRefused, parseOffice, type OfficeFields } from '../../gatherer/office.js';
import { MiB, peakRssGrowth } from '../helpers/memory.js';
import { repoRoot } from '../helpers/paths.js';
import { deflatedEntry, zipOf, type ZipEntry } from '../helpers/zip.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MIME: Record<string, string> = {
  docx: DOCX,
  xlsx: XLSX,
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
};
const URL = 'https://example.com/docs/report';
const MAX_DECODED = 32 * MiB;

function fixture(name: string): Buffer {
  return readFileSync(join(repoRoot, 'test', 'fixtures', 'office', name));
}

interface Parsed {
  fields: OfficeFields;
  text: string;
  anchors: Map<number, string>;
  /** The words of each heading run, by type. */
  headings: { 1: string[]; 2: string[] };
  /** The text of each block. */
  blocks: string[];
}

async function parse(body: Buffer, mime: string, maxDecoded = MAX_DECODED): Promise<Parsed> {
  const builder = new TextBuilder(1 << 20);
  const fields = await parseOffice(body, mime, URL, builder, maxDecoded);
  const buf = builder.finish();
  const headings: Parsed['headings'] = { 1: [], 2: [] };
  const blocks = [''];
  for (const token of readDocText(buf)) {
    if (token.kind === 'break') blocks.push('');
    if (token.kind !== 'text') continue;
    blocks[blocks.length - 1] += token.text;
    if (token.type === WORD_TYPE.heading1) headings[1].push(token.text.trim());
    if (token.type === WORD_TYPE.heading2) headings[2].push(token.text.trim());
  }
  return { fields, ...plainTextAndAnchors(buf), headings, blocks: blocks.map((b) => b.trim()) };
}

test('OFFICE_TYPES are the six MIME types', () => {
  assert.deepEqual([...OFFICE_TYPES].sort(), Object.values(MIME).sort());
});

const REPORTS = ['sample.docx', 'sample-libreoffice.docx', 'sample.odt', 'sample.pptx', 'sample.odp'];

for (const name of REPORTS) {
  test(`${name}: text in order, headings typed, title, metas and links with their anchors`, async () => {
    const parsed = await parse(fixture(name), MIME[name.split('.').pop()!]!);
    const { fields, text } = parsed;
    assert.equal(fields.title, 'Quokka Expedition Report');
    assert.ok(fields.metas.some((m) => m.type === 'meta' && m.text === 'A short report on the quokka survey of the island'), JSON.stringify(fields.metas));
    assert.ok(fields.metas.some((m) => m.type === 'keywords' && /quokka.*marsupial.*survey/.test(m.text)), JSON.stringify(fields.metas));
    assert.deepEqual(fields.links, [
      { type: 'R', url: 'https://example.org/register?id=42' },
      { type: 'R', url: 'https://example.org/rangers/' },
    ]);
    assert.equal(parsed.anchors.get(0), 'wildlife register');
    assert.equal(parsed.anchors.get(1), 'ranger notes');
    for (const words of ['zeppelin on a windy morning', 'Thornbury', 'picnic of lamingtons']) assert.ok(text.includes(words), `${words} in ${text}`);
    assert.ok(text.indexOf('zeppelin on a windy') < text.indexOf('Thornbury'), 'reading order');
    assert.ok(parsed.headings[1].includes('Zeppelin arrival'), JSON.stringify(parsed.headings));
    assert.ok(parsed.headings[1].includes('Quokka Expedition Report'), JSON.stringify(parsed.headings));
    // Table cells are blocks of their own, as in HTML.
    assert.ok(parsed.blocks.includes('Thornbury') && parsed.blocks.includes('23'), JSON.stringify(parsed.blocks));
    assert.deepEqual(fields.problems, []);
  });
}

test('word processors: heading 2, footnotes and the declared language', async () => {
  for (const name of ['sample.docx', 'sample-libreoffice.docx', 'sample.odt']) {
    const parsed = await parse(fixture(name), MIME[name.split('.').pop()!]!);
    assert.ok(parsed.headings[2].includes('Burrow census'), `${name}: ${JSON.stringify(parsed.headings)}`);
    assert.ok(parsed.text.includes('sponge cake rolled in desiccated coconut'), `${name}: footnote`);
    assert.equal(parsed.fields.language, 'en-gb', name);
  }
});

test('presentations: slides in order, the title slide first', async () => {
  for (const name of ['sample.pptx', 'sample.odp']) {
    const { blocks } = await parse(fixture(name), MIME[name.split('.').pop()!]!);
    assert.equal(blocks[0], 'Quokka Expedition Report', name);
    assert.ok(blocks.indexOf('Zeppelin arrival') < blocks.indexOf('Burrow census'), `${name}: ${JSON.stringify(blocks)}`);
  }
});

for (const name of ['census.xlsx', 'census.ods']) {
  test(`${name}: sheet names as headings, a block per row, strings and numbers, properties and the cell's link`, async () => {
    const parsed = await parse(fixture(name), MIME[name.split('.').pop()!]!);
    assert.equal(parsed.fields.title, 'Wombat Census Workbook');
    assert.equal(parsed.fields.language, 'de-at');
    assert.deepEqual(parsed.fields.metas.map((m) => m.type), ['meta', 'keywords']);
    assert.match(parsed.fields.metas[1]!.text, /wombat.*census/);
    assert.deepEqual(parsed.headings[1], ['Colonies', 'Supplies']);
    assert.deepEqual(parsed.blocks, ['Colonies', 'Colony Burrows Register', 'Marigold 17 marigold entry', 'Thornbury 23.5 Marigold', 'Supplies', 'Lamingtons 144']);
    assert.deepEqual(parsed.fields.links, [{ type: 'R', url: 'https://example.org/colonies/marigold' }]);
    assert.equal(parsed.anchors.get(0), 'marigold entry');
  });
}

test('xlsx inline strings and formula strings are read; booleans and errors are not words', async () => {
  const zip = zipOf([
    deflatedEntry('_rels/.rels', rels([['rId1', 'officeDocument', 'xl/workbook.xml']])),
    deflatedEntry('xl/workbook.xml', '<workbook xmlns:r="r"><sheets><sheet name="Only" sheetId="1" r:id="rId1"/></sheets></workbook>'),
    deflatedEntry('xl/_rels/workbook.xml.rels', rels([['rId1', 'worksheet', 'worksheets/sheet1.xml']])),
    deflatedEntry(
      'xl/worksheets/sheet1.xml',
      '<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Numbat</t></is></c><c r="B1" t="b"><v>1</v></c>' +
        '<c r="C1" t="e"><v>#DIV/0!</v></c><c r="D1" t="str"><f>UPPER("x")</f><v>BILBY</v></c><c r="E1"><v>6.5</v></c></row></sheetData></worksheet>',
    ),
  ]);
  const parsed = await parse(zip, XLSX);
  assert.deepEqual(parsed.blocks, ['Only', 'Numbat BILBY 6.5']);
});

/** A package relationships part; types are the officeDocument namespace's. */
function rels(list: Array<[id: string, type: string, target: string]>): string {
  const items = list.map(([id, type, target]) => `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`);
  return `<Relationships>${items.join('')}</Relationships>`;
}

/** The parts of a one-paragraph docx, `document` as word/document.xml. */
function docxParts(document: ZipEntry): ZipEntry[] {
  return [deflatedEntry('[Content_Types].xml', '<Types/>'), deflatedEntry('_rels/.rels', rels([['rId1', 'officeDocument', 'word/document.xml']])), document];
}

/** 1 GiB of spaces, deflated (about 4.5 MB). */
async function gibOfSpacesDeflated(): Promise<Buffer> {
  const deflate = createDeflateRaw({ level: 1 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  const spaces = Buffer.alloc(MiB, 0x20);
  for (let i = 0; i < 1024; i++) if (!deflate.write(spaces)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  return Buffer.concat(out);
}

async function refusal(body: Buffer, mime = DOCX, maxDecoded = MAX_DECODED): Promise<OfficeRefused> {
  try {
    await parse(body, mime, maxDecoded);
  } catch (err) {
    assert.ok(err instanceof OfficeRefused, String(err));
    return err;
  }
  assert.fail('not refused');
}

test('zip bombs disguised as a docx are refused as too large, in bounded memory', async () => {
  const bomb = await gibOfSpacesDeflated();
  // The header says 1 GiB: refused before inflating.
  const honest = zipOf(docxParts({ name: 'word/document.xml', data: bomb, method: 8, size: 1024 * MiB }));
  const first = await peakRssGrowth(() => refusal(honest));
  assert.equal(first.result.tooLarge, true);
  assert.match(first.result.message, /"word\/document\.xml" at offset \d+ declares 1073741824 bytes/);
  // The header says 16 MiB: inflating stops just past it.
  const lying = zipOf(docxParts({ name: 'word/document.xml', data: bomb, method: 8, size: 16 * MiB }));
  const second = await peakRssGrowth(() => refusal(lying));
  assert.equal(second.result.tooLarge, true);
  assert.match(second.result.message, /"word\/document\.xml" at offset \d+ inflates past the 16777216 bytes it declares/);
  for (const { growth } of [first, second]) assert.ok(growth < 64 * MiB, `RSS grew ${Math.round(growth / MiB)} MiB for a 1 GiB bomb`);
});

test('parts adding up past the decoded-size budget are refused as too large', async () => {
  const half = Buffer.alloc(600 * 1024, 0x20);
  const zip = zipOf([
    deflatedEntry('_rels/.rels', rels([['rId1', 'officeDocument', 'word/document.xml']])),
    deflatedEntry('word/document.xml', Buffer.concat([Buffer.from('<w:document><w:body><w:p><w:r><w:t>hi</w:t></w:r></w:p>'), half, Buffer.from('</w:body></w:document>')])),
    deflatedEntry('word/_rels/document.xml.rels', rels([['rId1', 'styles', 'styles.xml']])),
    deflatedEntry('word/styles.xml', half),
  ]);
  const refused = await refusal(zip, DOCX, MiB);
  assert.equal(refused.tooLarge, true);
  // styles.xml is read first (it says which paragraphs are headings); the document no longer fits.
  assert.match(refused.message, /"word\/document\.xml" at offset \d+ declares 614477 bytes, past the 1048576 bytes/);
});

test('a central directory of too many entries is refused as too large', async () => {
  const entries = Array.from({ length: MAX_ZIP_ENTRIES + 1 }, (_, i): ZipEntry => ({ name: `x/${i}`, data: Buffer.alloc(0), method: 0, size: 0 }));
  const refused = await refusal(zipOf(entries));
  assert.equal(refused.tooLarge, true);
  assert.match(refused.message, new RegExp(`lists ${MAX_ZIP_ENTRIES + 1} entries`));
});

test('a truncated docx and random bytes are refused as not a zip', async () => {
  const docx = fixture('sample.docx');
  let seed = 7;
  const random = Buffer.from(Array.from({ length: 20_000 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff));
  for (const body of [docx.subarray(0, docx.length >> 1), random]) {
    const refused = await refusal(body);
    assert.equal(refused.tooLarge, false);
    assert.match(refused.message, /^not a zip file: end of central directory record signature not found/i);
  }
});

test('an entry whose data does not inflate is refused naming it', async () => {
  const garbage: ZipEntry = { name: 'word/document.xml', data: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]), method: 8, size: 100 };
  const refused = await refusal(zipOf(docxParts(garbage)));
  assert.equal(refused.tooLarge, false);
  assert.match(refused.message, /^entry "word\/document\.xml" at offset \d+ does not inflate/);
});

test('an OLE compound file (encrypted OOXML, legacy .doc) is refused as such', async () => {
  const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(4096)]);
  const refused = await refusal(ole);
  assert.equal(refused.tooLarge, false);
  assert.match(refused.message, /^encrypted or legacy binary office file/);
});

test('a zip that is not an office package is refused; so is one naming an entry twice', async () => {
  const plain = await refusal(zipOf([deflatedEntry('notes.txt', 'hello')]));
  assert.match(plain.message, /^not an office file/);
  const odt = await refusal(zipOf([deflatedEntry('mimetype', 'application/vnd.oasis.opendocument.text')]), MIME['odt']);
  assert.match(odt.message, /^not an OpenDocument file/);
  const twice = await refusal(zipOf([...docxParts(deflatedEntry('word/document.xml', '<w:document/>')), deflatedEntry('Word/Document.xml', '<w:document/>')]));
  assert.match(twice.message, /"Word\/Document\.xml" at offset \d+ is named twice/);
});

test('reading stops once the text is cut at its cap, without error', async () => {
  const builder = new TextBuilder(64);
  await parseOffice(fixture('sample.odt'), MIME['odt']!, URL, builder, MAX_DECODED);
  assert.equal(builder.cut, true);
  assert.ok(builder.finish().length <= 64);
});
