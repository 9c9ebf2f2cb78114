/**
 * What parse.ts reads besides HTML and plain text (issue 30): news feeds
 * (gatherer/feed.ts: RSS 2.0, RSS 1.0 and Atom give the channel's title,
 * each entry's title as a heading bracketed as its link's anchor text, its
 * summary or content as text with escaped HTML's tags dropped, its link as
 * an R link; pages name their feeds by <link rel=alternate>), any other XML
 * as its character data (xml-text.ts), CSV and TSV with a block a row;
 * nesting past MAX_DEPTH stops the read.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { plainText, readDocText, WORD_TYPE } from '../../common/bucket/doc-text.js';
import { parseTextDocument, type ParsedDocument } from '../../gatherer/parse.js';
import { MAX_DEPTH } from '../../gatherer/sitemap.js';

const BASE = 'http://news.example/feed';

function feed(xml: string, contentType = 'application/rss+xml'): ParsedDocument {
  return parseTextDocument({ url: BASE, contentType, body: Buffer.from(xml, 'utf8') });
}

/** The text of each bracket with its link's URL. */
function anchors(doc: ParsedDocument): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let open: [string, string] | undefined;
  for (const token of readDocText(doc.text)) {
    if (token.kind === 'link-open') open = [doc.links[token.n]!.url, ''];
    else if (token.kind === 'text' && open !== undefined) open[1] += token.text;
    else if (token.kind === 'link-close' && open !== undefined) {
      out.push([open[0], open[1].trim()]);
      open = undefined;
    }
  }
  return out;
}

/** The words written with the heading type. */
function headings(doc: ParsedDocument): string {
  return [...readDocText(doc.text)]
    .filter((t) => t.kind === 'text' && t.type === WORD_TYPE.heading2)
    .map((t) => (t.kind === 'text' ? t.text : ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

test('RSS 2.0: the channel title, each item a heading linked to its page, its description as text without the escaped tags', () => {
  const doc = feed(`<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel>
  <title>Harbour News</title><link>http://news.example/</link><description>What the harbour did</description>
  <image><title>not the title</title><url>http://news.example/logo.png</url></image>
  <item><title>Ferry timetable changes</title><link>http://news.example/2024/ferry</link>
    <description>&lt;p&gt;The &lt;b&gt;winter&lt;/b&gt; timetable starts on Monday.&lt;/p&gt;</description></item>
  <item><description>An item whose link comes last.</description><title>Lighthouse open day</title><link>/2024/lighthouse</link></item>
  <item><title>No link here</title></item>
</channel></rss>`);
  assert.equal(doc.kind, 'feed');
  assert.equal(doc.title, 'Harbour News');
  assert.deepEqual(
    doc.links.map((l) => [l.type, l.url]),
    [
      ['R', 'http://news.example/2024/ferry'],
      ['R', 'http://news.example/2024/lighthouse'],
    ],
  );
  assert.deepEqual(anchors(doc), [
    ['http://news.example/2024/ferry', 'Ferry timetable changes'],
    ['http://news.example/2024/lighthouse', 'Lighthouse open day'],
  ]);
  assert.equal(headings(doc), 'Ferry timetable changes Lighthouse open day No link here');
  const words = plainText(doc.text);
  assert.match(words, /The winter timetable starts on Monday\./);
  assert.match(words, /An item whose link comes last\./);
  assert.doesNotMatch(words, /<p>|&lt;|not the title/);
  assert.equal(doc.detectedLanguage, 'en');
});

test('Atom: the feed title, entries with alternate links (not self or edit), xhtml content read as text', () => {
  const doc = feed(
    `<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Observatory log</title>
  <link rel="self" href="http://news.example/feed"/>
  <entry><title>Comet sighted over the bay</title>
    <link rel="edit" href="http://news.example/edit/1"/><link href="http://news.example/comet"/>
    <summary type="html">A &lt;em&gt;bright&lt;/em&gt; comet was seen at dawn.</summary></entry>
  <entry><title>Telescope repaired</title><link rel="alternate" type="text/html" href="telescope"/>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>The mirror was <b>realigned</b> by the night crew.</p></div></content></entry>
</feed>`,
    'application/atom+xml',
  );
  assert.equal(doc.kind, 'feed');
  assert.equal(doc.title, 'Observatory log');
  assert.deepEqual(anchors(doc), [
    ['http://news.example/comet', 'Comet sighted over the bay'],
    ['http://news.example/telescope', 'Telescope repaired'],
  ]);
  assert.equal(doc.links.length, 2);
  const words = plainText(doc.text);
  assert.match(words, /A bright comet was seen at dawn\./);
  assert.match(words, /The mirror was realigned by the night crew\./);
});

test('RSS 1.0 (RDF), served as application/xml: items outside the channel, linked by rdf:about or <link>', () => {
  const doc = feed(
    `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
  <channel rdf:about="http://news.example/"><title>Tide tables</title></channel>
  <item rdf:about="http://news.example/tides/march"><title>March tides</title><description>Spring tides on the 10th.</description></item>
  <item rdf:about="http://news.example/x"><title>April tides</title><link>http://news.example/tides/april</link></item>
</rdf:RDF>`,
    'application/xml',
  );
  assert.equal(doc.kind, 'feed');
  assert.equal(doc.title, 'Tide tables');
  assert.deepEqual(
    doc.links.map((l) => l.url),
    ['http://news.example/tides/march', 'http://news.example/tides/april'],
  );
  assert.match(plainText(doc.text), /Spring tides on the 10th\./);
});

test('other XML is neither a sitemap nor a feed but text, its values words apart; a sitemap is still a sitemap', () => {
  const other = feed('<?xml version="1.0"?><catalog><book id="b1"><title>Orbital mechanics</title><year>1987</year><price>12&amp;50</price></book></catalog>', 'application/xml');
  assert.equal(other.kind, 'xml');
  assert.equal(plainText(other.text).replace(/\s+/g, ' ').trim(), 'Orbital mechanics 1987 12&50');
  assert.deepEqual(other.links, []);
  assert.equal(feed('<urlset><url><loc>http://news.example/a</loc></url></urlset>', 'text/xml').kind, 'sitemap');
});

test('nesting deeper than MAX_DEPTH stops the read, keeping the entries before it', () => {
  const deep = '<x>'.repeat(100_000) + '</x>'.repeat(100_000);
  const doc = feed(`<rss><channel><title>Deep</title><item><title>Kept</title><link>http://news.example/kept</link></item><item><description>${deep}</description></item></channel></rss>`);
  assert.equal(doc.kind, 'feed');
  assert.deepEqual(
    doc.links.map((l) => l.url),
    ['http://news.example/kept'],
  );
  assert.ok(doc.problems.some((p) => p.includes(`deeper than ${MAX_DEPTH}`)), JSON.stringify(doc.problems));
});

test('a page names its feeds with <link rel=alternate> of a feed type: they are its links (autodiscovery); other alternates are not', () => {
  const doc = parseTextDocument({
    url: 'http://news.example/',
    contentType: 'text/html',
    body: Buffer.from(`<html><head><title>Harbour</title>
<link rel="alternate" type="application/rss+xml" title="News" href="/feed.xml">
<link rel="Alternate" type="Application/Atom+XML" href="http://news.example/atom">
<link rel="alternate" hreflang="de" href="/de/"><link rel="stylesheet" type="text/css" href="/s.css">
</head><body><p>Welcome.</p></body></html>`),
  });
  assert.deepEqual(
    doc.links.map((l) => [l.type, l.url]),
    [
      ['R', 'http://news.example/feed.xml'],
      ['R', 'http://news.example/atom'],
    ],
  );
});

test('a summary of a million "<" and no ">" is read in linear time, as text', { timeout: 60_000 }, () => {
  const doc = feed(`<rss><channel><item><title>Brackets</title><description>${'&lt;'.repeat(1_000_000)} tail</description></item></channel></rss>`);
  assert.match(plainText(doc.text), /tail/);
});

test('CSV and TSV are text, each row a block (no phrase joins two rows)', () => {
  for (const [contentType, body] of [
    ['text/csv', 'name,city\r\nAda,London\r\n"Grace, Rear Admiral",Arlington\r\n'],
    ['text/tab-separated-values', 'name\tcity\nAda\tLondon\nGrace, Rear Admiral\tArlington\n'],
  ] as const) {
    const doc = parseTextDocument({ url: 'http://news.example/people', contentType, body: Buffer.from(body) });
    assert.equal(doc.kind, 'text', contentType);
    const rows = [...readDocText(doc.text)]
      .map((t) => (t.kind === 'break' ? '|' : t.kind === 'text' ? t.text : ''))
      .join('')
      .split('|')
      .map((row) => row.replace(/\W+/g, ' ').trim());
    assert.deepEqual(rows, ['name city', 'Ada London', 'Grace Rear Admiral Arlington'], contentType);
  }
});
