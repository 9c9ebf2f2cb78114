import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { BUCKET_TYPE, BucketObject, decodeBucket, encodeBucket } from '../../common/bucket/bucket.js';
import { plainText, readDocText, TextBuilder, WORD_TYPE, type DocTextToken } from '../../common/bucket/doc-text.js';
import { SherlockError } from '../../common/errors.js';
import { MAX_LINKS } from '../../gatherer/parse-html.js';
import { documentBody, META_TYPES, parseBody, type DocumentBody } from '../../common/bucket/doc-body.js';
import { MAX_TEXT_BYTES, parseTextDocument, type ParsedDocument } from '../../gatherer/parse.js';

const URL_ = 'http://example.com/dir/page.html';
/** 'Příliš žluťoučký kůň' in windows-1250, byte by byte from the code page table. */
const CZECH_1250 = Buffer.from('50f8ed6c699a209e6c759d6f75e86bfd206bf9f2', 'hex');
const CZECH = 'Příliš žluťoučký kůň';
/** 日本語 in Shift_JIS. */
const JAPANESE_SJIS = Buffer.from('93fa967b8cea', 'hex');

const ascii = (text: string) => Buffer.from(text, 'latin1');

function html(markup: string | Buffer, charsetParam?: string): ParsedDocument {
  const body = typeof markup === 'string' ? Buffer.from(markup, 'utf8') : markup;
  return parseTextDocument({ url: URL_, contentType: 'text/html', body, ...(charsetParam === undefined ? {} : { charsetParam }) });
}

const tokens = (doc: ParsedDocument): DocTextToken[] => [...readDocText(doc.text)];
const urls = (doc: ParsedDocument, type: string) => doc.links.filter((link) => link.type === type).map((link) => link.url);

/** The text of each bracket, by link index. */
function anchors(doc: ParsedDocument): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let open: [number, string] | undefined;
  for (const token of tokens(doc)) {
    if (token.kind === 'link-open') open = [token.n, ''];
    else if (token.kind === 'text' && open !== undefined) open[1] += token.text;
    else if (token.kind === 'link-close' && open !== undefined) {
      out.push(open);
      open = undefined;
    }
  }
  return out;
}

test('a windows-1250 page named by the Content-Type charset is decoded from its bytes', () => {
  const body = Buffer.concat([ascii('<html><head><title>'), CZECH_1250, ascii('</title></head><body><p>'), CZECH_1250, ascii('</p></body></html>')]);
  const doc = html(body, 'windows-1250');
  assert.equal(doc.kind, 'html');
  assert.equal(doc.charset, 'windows-1250');
  assert.equal(doc.title, CZECH);
  assert.equal(plainText(doc.text), CZECH);
});

test('a Shift_JIS page declared only by <meta charset> is decoded as Shift_JIS', () => {
  const doc = html(Buffer.concat([ascii('<html><head><meta charset=Shift_JIS><title>'), JAPANESE_SJIS, ascii('</title></head><body><h1>'), JAPANESE_SJIS, ascii('</h1>')]));
  assert.equal(doc.charset, 'shift_jis');
  assert.equal(doc.title, '日本語');
  assert.deepEqual(tokens(doc), [{ kind: 'text', text: '日本語', type: WORD_TYPE.heading1 }]);
});

test('a UTF-8 page with a BOM wins over a contradicting meta; a header charset wins over the meta', () => {
  const bom = html(Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), Buffer.from(`<meta charset=windows-1250><p>${CZECH}`)]));
  assert.equal(bom.charset, 'utf-8');
  assert.equal(plainText(bom.text), CZECH);
  const header = html(Buffer.concat([ascii('<meta charset=utf-8><p>'), CZECH_1250]), 'Windows-1250');
  assert.equal(header.charset, 'windows-1250');
  assert.equal(plainText(header.text), CZECH);
  assert.deepEqual(header.problems, []);
});

test('word types follow headings, emphasis, small print and alt text; blocks break', () => {
  const doc = html(
    '<h1>Main <b>bold</b></h1><h3>Sub</h3><p>Plain <strong>strong</strong> <em>em</em> <i>i</i> and <small>small <sub>x</sub></small>' +
      ' <img src="/logo.png" alt="Logo"> end</p><ul><li>one<li>two</ul><table><tr><td>a<td>b</table>',
  );
  assert.deepEqual(tokens(doc), [
    { kind: 'text', text: 'Main bold', type: WORD_TYPE.heading1 },
    { kind: 'break' },
    { kind: 'text', text: 'Sub', type: WORD_TYPE.heading2 },
    { kind: 'break' },
    { kind: 'text', text: 'Plain ', type: WORD_TYPE.text },
    // Between two emphasised words the type is not switched back and forth.
    { kind: 'text', text: 'strong em i ', type: WORD_TYPE.emphasised },
    { kind: 'text', text: 'and ', type: WORD_TYPE.text },
    { kind: 'text', text: 'small x ', type: WORD_TYPE.small },
    { kind: 'text', text: 'Logo ', type: WORD_TYPE.alt },
    { kind: 'text', text: 'end', type: WORD_TYPE.text },
    { kind: 'break' },
    { kind: 'text', text: 'one', type: WORD_TYPE.text },
    { kind: 'break' },
    { kind: 'text', text: 'two', type: WORD_TYPE.text },
    { kind: 'break' },
    { kind: 'text', text: 'a', type: WORD_TYPE.text },
    { kind: 'break' },
    { kind: 'text', text: 'b', type: WORD_TYPE.text },
  ]);
  assert.deepEqual(urls(doc, 'I'), ['http://example.com/logo.png']);
});

test('anchors become R links with their text in brackets; a repeated URL brackets its first index', () => {
  const doc = html(
    '<p>See <a href="/a">the <b>first</b> page</a> and <a href="b.html#x" rel="nofollow">another</a>, ' +
      '<a href="http://EXAMPLE.com:80/a">again</a>, <a name="anchor">no href</a> and <a href="mailto:x@example.com">mail</a>.</p>',
  );
  assert.deepEqual(urls(doc, 'R'), ['http://example.com/a', 'http://example.com/dir/b.html']);
  assert.deepEqual(anchors(doc), [
    [0, 'the first page'],
    [1, 'another'],
    [0, 'again'],
  ]);
  assert.equal(plainText(doc.text), 'See the first page and another, again, no href and mail.');
  assert.deepEqual(doc.problems, ['1 link(s) dropped: not http(s) or unparseable (first "mailto:x@example.com")']);
});

test('links resolve against the first <base href>; frames, images and refresh have their own types', () => {
  const doc = html(
    '<html><head><base href="https://other.example/base/"><base href="http://ignored.example/">' +
      '<meta http-equiv="Refresh" content="0; URL=\'../next?a=1\'"><meta http-equiv=refresh content="0; url=/second">' +
      '<link rel="alternate canonical" href="/canon#frag"></head><body>' +
      '<a href="x">x</a><iframe src="frame.html"></iframe><frame src="//cdn.example/f"><img src="x"><img src="javascript:void(0)">' +
      '<area href="map" alt="m"></body></html>',
  );
  assert.deepEqual(doc.links, [
    { type: 'Y', url: 'https://other.example/next?a=1' },
    { type: 'R', url: 'https://other.example/base/x' },
    { type: 'F', url: 'https://other.example/base/frame.html' },
    { type: 'F', url: 'https://cdn.example/f' },
    { type: 'I', url: 'https://other.example/base/x' },
    { type: 'R', url: 'https://other.example/base/map' },
  ]);
  assert.equal(doc.canonical, 'https://other.example/canon');
  assert.equal(doc.problems.length, 1);

  const bad = html('<base href="javascript:alert(1)"><a href="rel">r</a>');
  assert.deepEqual(urls(bad, 'R'), ['http://example.com/dir/rel']);
  assert.match(bad.problems[0]!, /<base href="javascript:alert\(1\)"> does not resolve/);
});

test('a refresh without a URL or with a bad one gives no Y', () => {
  assert.deepEqual(urls(html('<meta http-equiv="refresh" content="30">'), 'Y'), []);
  assert.deepEqual(urls(html('<meta http-equiv="refresh" content="soon; url=/x">'), 'Y'), []);
  assert.deepEqual(urls(html('<meta http-equiv="refresh" content="5,/plain">'), 'Y'), ['http://example.com/plain']);
});

test('meta robots and meta sherlock set noindex, nofollow, noarchive; none is both of the first two', () => {
  assert.deepEqual(html('<meta name="ROBOTS" content="NOINDEX, follow"><meta name=Sherlock content="noarchive">').robots, {
    noindex: true,
    nofollow: false,
    noarchive: true,
  });
  assert.deepEqual(html('<meta name=robots content=none>').robots, { noindex: true, nofollow: true, noarchive: false });
  assert.deepEqual(html('<meta name=googlebot content=noindex>').robots, { noindex: false, nofollow: false, noarchive: false });
  // nofollow is recorded, not applied: the links are still there.
  const nofollow = html('<meta name=robots content=nofollow><a href=/x>x</a>');
  assert.equal(nofollow.robots.nofollow, true);
  assert.equal(nofollow.links.length, 1);
});

test('title, description, keywords and language are read; script, style, noscript, template and head text are not', () => {
  const doc = html(
    '<!DOCTYPE html><html lang="cs_CZ"><head><title>\n  A   title\t</title>' +
      '<meta name="Description" content="  About   this page "><meta name=keywords content="a, b"><meta name=description content="second">' +
      '<style>p { color: red }</style><script>var x = "<a href=/s>";</script></head>' +
      '<body><noscript><img src="/pixel.gif">Enable JS</noscript><template><a href="/t">t</a></template>' +
      '<p>Body &amp; soul&nbsp;here</p><svg><title>icon</title></svg></body></html>',
  );
  assert.equal(doc.title, 'A title');
  assert.deepEqual(doc.metas, [
    { type: 'meta', text: 'About this page' },
    { type: 'keywords', text: 'a, b' },
  ]);
  assert.equal(doc.language, 'cs-cz');
  assert.equal(plainText(doc.text), 'Body & soul here\nicon');
  assert.deepEqual(doc.links, []);
  assert.deepEqual(html('<html lang="not a tag!"><p>x').problems, ['<html lang="not a tag!"> is not a language tag; ignored']);
});

test('text in an unclosed head ends the head, and a stray <head> later is ignored, as the HTML parser does', () => {
  const doc = html('<html><head><title>T</title><div>Visible</div><head>Still visible</head>');
  assert.equal(doc.title, 'T');
  assert.equal(plainText(doc.text), 'Visible\nStill visible');
});

test('at most MAX_LINKS R links are stored and bracketed; the rest are counted', () => {
  const markup = Array.from({ length: MAX_LINKS + 50 }, (_, i) => `<a href="/p${i}">p${i}</a>`).join(' ');
  const doc = html(markup);
  assert.equal(urls(doc, 'R').length, MAX_LINKS);
  const bracketed = anchors(doc);
  assert.equal(bracketed.length, MAX_LINKS);
  assert.deepEqual(bracketed.at(-1), [MAX_LINKS - 1, `p${MAX_LINKS - 1}`]);
  assert.deepEqual(doc.problems, [`50 link(s) over the cap of ${MAX_LINKS} per type not stored`]);
  // The links over the cap keep their text, outside any bracket.
  assert.ok(plainText(doc.text).endsWith(`p${MAX_LINKS + 49}`));
});

test('the text stops at MAX_TEXT_BYTES with a whole word and says so', () => {
  const doc = html(`<p>${'word '.repeat(MAX_TEXT_BYTES / 4)}</p>`);
  assert.ok(doc.text.length <= MAX_TEXT_BYTES && doc.text.length > MAX_TEXT_BYTES - 10);
  assert.ok(plainText(doc.text).endsWith('word'));
  assert.deepEqual(doc.problems, [`text cut at ${MAX_TEXT_BYTES} bytes`]);
});

test('text/plain breaks at blank lines; other types are not parsed; a missing type is sniffed', () => {
  const text = parseTextDocument({ url: URL_, contentType: 'text/plain', body: Buffer.from('First  line\r\nsame paragraph\r\n \r\n\r\nSecond <b>not html</b>\n') });
  assert.equal(text.kind, 'text');
  assert.equal(text.charset, 'utf-8');
  assert.equal(plainText(text.text), 'First line same paragraph\nSecond <b>not html</b>');
  assert.deepEqual(text.links, []);

  const png = parseTextDocument({ url: URL_, contentType: 'image/png', body: Buffer.from('<html><a href=/x>x</a>') });
  assert.deepEqual(png, { kind: 'other', text: Buffer.alloc(0), metas: [], links: [], robots: { noindex: false, nofollow: false, noarchive: false }, problems: [] });

  const sniffed = parseTextDocument({ url: URL_, body: Buffer.from('\ufeff \n<!DOCTYPE HTML><title>t</title><p>x') });
  assert.equal(sniffed.kind, 'html');
  assert.equal(sniffed.title, 't');
  for (const start of ['<html>', '<HEAD>', '<body ', '<title>', '<p>', '<a href=x>', '<div>', '<!-- c -->']) {
    assert.equal(parseTextDocument({ url: URL_, body: Buffer.from(`  ${start}x`) }).kind, 'html', start);
  }
  for (const start of ['%PDF-1.4', '<pre>', '<abbr>', '<?xml version="1.0"?>', '']) {
    assert.equal(parseTextDocument({ url: URL_, body: Buffer.from(start) }).kind, 'other', start);
  }
  assert.equal(parseTextDocument({ url: URL_, contentType: 'application/xhtml+xml', body: Buffer.from('<html><p>x</p></html>') }).charset, 'utf-8');
});

test('documentBody writes M, X, links, c, p, l, g as specified and parseBody reads them back', () => {
  const doc = html(
    '<html lang=en><title>Title</title><meta name=keywords content="k1 k2"><meta name=robots content="noindex,noarchive">' +
      '<link rel=canonical href=/c><p><a href=/a>A</a><img src=/i.png><img src="/j%20k.png" alt=" The  lake\n at dawn "><img src=/j%20k.png alt=second>',
  );
  const body = documentBody(doc);
  assert.deepEqual(
    body.items.map((item) => [item.name, item.value?.toString('latin1')]),
    [
      ['M', '\x90Title'],
      ['M', '\x91k1 k2'],
      ['X', doc.text.toString('latin1')],
      ['R', 'http://example.com/a'],
      ['I', 'http://example.com/i.png'],
      // An image keeps the page's first alt text after its URL, whitespace collapsed (a canonical URL has no space).
      ['I', 'http://example.com/j%20k.png The lake at dawn'],
      ['c', 'http://example.com/c'],
      ['p', 'noindex'],
      ['p', 'noarchive'],
      ['l', 'en'],
      // Two words say too little against the declared language: it stands.
      ['g', 'en'],
    ],
  );
  const { kind: _kind, charset: _charset, problems: _problems, ...fields } = doc;
  const bucket = decodeBucket(BUCKET_TYPE.V33_DEFLATE, encodeBucket(BUCKET_TYPE.V33_DEFLATE, { header: new BucketObject(), body }));
  assert.deepEqual(parseBody(bucket.body), fields);
  // A PDF's page count is `n`; one that is not a whole number, like a bad meta or robots value, is a corrupt bucket.
  assert.equal(parseBody(documentBody({ ...fields, pages: 12 })).pages, 12);
  for (const [name, value, message] of [['n', '12a', /page count n is not a whole number: "12a"/], ['M', 'x', /has no meta type byte/], ['p', 'noodle', /unknown robots directive "noodle"/]] as const) {
    assert.throws(() => parseBody(new BucketObject().add(name, value)), (err: unknown) => err instanceof SherlockError && err.code === 'SHERLOCK_CORRUPT_BUCKET' && message.test(err.message));
  }
  // An empty document writes nothing but what is set: no language declared, none told.
  assert.deepEqual(documentBody(html('')).items.map((item) => [item.name, item.value?.toString('latin1')]), [['g', 'und']]);
});

test('parseBody reads weights and indexer metas, skips other attributes, rejects malformed M and p', () => {
  const body = new BucketObject()
    .add('M', Buffer.concat([Buffer.from('3'), Buffer.of(0x93), Buffer.from('urlword')]))
    .add('M', Buffer.concat([Buffer.from('0'), Buffer.of(0x90), Buffer.from('weighted title')]))
    .add('N', 'thumbnail')
    .add('M', Buffer.concat([Buffer.of(0x95), Buffer.from('html')]));
  assert.deepEqual(parseBody(body), {
    text: Buffer.alloc(0),
    metas: [
      { type: 'urlword', weight: 3, text: 'urlword' },
      { type: 'title', weight: 0, text: 'weighted title' },
      { type: 'ext', text: 'html' },
    ],
    links: [],
    robots: { noindex: false, nofollow: false, noarchive: false },
  });
  for (const bad of [new BucketObject().add('M', Buffer.of(0x96, 0x41)), new BucketObject().add('M', '4x'), new BucketObject().add('p', 'noodle')]) {
    assert.throws(() => parseBody(bad), (err: unknown) => err instanceof SherlockError && err.code === 'SHERLOCK_CORRUPT_BUCKET');
  }
  assert.throws(() => documentBody({ text: Buffer.alloc(0), metas: [{ type: 'title', text: 'x' }], links: [], robots: { noindex: false, nofollow: false, noarchive: false } }), RangeError);
});

test('property: parseBody(documentBody(doc)) is doc', () => {
  const word = fc.string({ unit: fc.constantFrom('a', 'ž', '日', ' ', '😀', '\n'), minLength: 1, maxLength: 10 });
  const url = fc.webUrl({ withQueryParameters: true });
  const text = fc.array(word, { maxLength: 5 }).map((words) => {
    const builder = new TextBuilder(1000);
    for (const w of words) {
      builder.breakBlock();
      builder.append(w);
    }
    return builder.finish();
  });
  const meta = fc.record(
    { type: fc.constantFrom(...META_TYPES.filter((type) => type !== 'title')), weight: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<0 | 1 | 2 | 3>, text: fc.string() },
    { requiredKeys: ['type', 'text'], noNullPrototype: true },
  );
  const doc: fc.Arbitrary<DocumentBody> = fc.record(
    {
      title: fc.string(),
      text,
      metas: fc.array(meta, { maxLength: 4 }),
      links: fc.array(fc.record({ type: fc.constantFrom('R', 'F', 'I', 'Y') as fc.Arbitrary<'R' | 'F' | 'I' | 'Y'>, url }, { noNullPrototype: true }), { maxLength: 5 }),
      canonical: url,
      robots: fc.record({ noindex: fc.boolean(), nofollow: fc.boolean(), noarchive: fc.boolean() }, { noNullPrototype: true }),
      language: fc.constantFrom('en', 'cs-cz', 'ja'),
    },
    { requiredKeys: ['text', 'metas', 'links', 'robots'], noNullPrototype: true },
  );
  fc.assert(
    fc.property(doc, (d) => {
      assert.deepEqual(parseBody(documentBody(d)), d);
    }),
  );
});

// My own Czech sentences about a recipe site, and an English epigraph as a Czech manual's chapter may open with.
const CZECH_PARAGRAPH =
  'Koláče pečeme v troubě vyhřáté na sto osmdesát stupňů, dokud nejsou zlatavé. Těsto necháme nejprve kynout na teplém místě ' +
  'pod utěrkou, potom z něj tvoříme malé bochánky a do každého vmáčkneme důlek pro náplň. Tvarohovou náplň ochutíme citronovou ' +
  'kůrou a vanilkovým cukrem, povidla rozmícháme s trochou rumu. Hotové koláče posypeme drobenkou z másla, mouky a cukru. ';
const EPIGRAPH =
  '"What is your name?" "I am Arthur, King of the Britons." "What is your quest?" "I seek the Holy Grail!" ' +
  '"What is the airspeed velocity of an unladen swallow?" "What do you mean? An African or a European swallow?" ' +
  '"Huh? I do not know that!" Monty Python and the Holy Grail. ';

test("a page's language is told from its start, middle and end, not from an English epigraph above a Czech text", () => {
  // As aptitude-doc-cs's FAQ chapter: a quotation in English, then a page of Czech.
  const chapter = `<title>Kapitola 3</title><blockquote>${EPIGRAPH}</blockquote><p>${CZECH_PARAGRAPH}</p><p>${CZECH_PARAGRAPH}</p>`;
  assert.equal(html(chapter).detectedLanguage, 'cs');
  const long = `<title>Kapitola 3</title><blockquote>${EPIGRAPH.repeat(2)}</blockquote>` + `<p>${CZECH_PARAGRAPH}</p>`.repeat(16);
  assert.equal(html(long).detectedLanguage, 'cs');
  // A short text is its own sample (the detector windows it); a long one three: its start, middle and end.
  const short = new TextBuilder(MAX_TEXT_BYTES);
  short.append(EPIGRAPH);
  short.append(CZECH_PARAGRAPH);
  assert.deepEqual(short.samples(), [`${EPIGRAPH} ${CZECH_PARAGRAPH}`]);
  const builder = new TextBuilder(MAX_TEXT_BYTES);
  builder.append(EPIGRAPH.repeat(2));
  for (let i = 0; i < 16; i++) builder.append(CZECH_PARAGRAPH);
  const samples = builder.samples();
  assert.equal(samples.length, 3);
  assert.ok(samples[0]!.startsWith('"What is your name?"'));
  assert.ok(samples.slice(1).every((s) => /koláč/i.test(s)));
});
