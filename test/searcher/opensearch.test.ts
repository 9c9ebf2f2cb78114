/**
 * GET /opensearch.xml on a real searcher (no index needed: the description
 * does not search): an OpenSearch 1.1 description read back with an XML
 * parser, its URLs absolute for the Host asked, its name from
 * searcher.opensearch_name; the search page links to it.
 */

import assert from 'node:assert/strict';
import { request } from 'node:http';
import test from 'node:test';
import { Parser } from 'htmlparser2';
import { noIndexEngine } from '../../searcher/engine.js';
import { startServer } from './net.js';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
    })
      .on('error', reject)
      .end();
  });
}

/** The elements of an XML text, in order, with their attributes and text. */
function elements(xml: string): Array<{ name: string; attributes: Record<string, string>; text: string }> {
  const out: Array<{ name: string; attributes: Record<string, string>; text: string }> = [];
  const open: typeof out = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const element = { name, attributes, text: '' };
        out.push(element);
        open.push(element);
      },
      ontext(text) {
        if (open.length > 0) open[open.length - 1]!.text += text;
      },
      onclosetag() {
        open.pop();
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return out;
}

test('/opensearch.xml describes the searcher with absolute URLs for the Host asked, named by the config', async (t) => {
  const { http } = await startServer(t, noIndexEngine(), { listen: '127.0.4.3:0', opensearch_name: 'Lindenau <&>' });
  const host = new URL(http).host;
  const answer = await get(`${http}/opensearch.xml`);
  assert.equal(answer.status, 200);
  assert.equal(answer.type, 'application/opensearchdescription+xml; charset=utf-8');
  assert.match(answer.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<OpenSearchDescription xmlns="http:\/\/a9.com\/-\/spec\/opensearch\/1.1\/">/);
  const parsed = elements(answer.body);
  assert.equal(parsed.find((e) => e.name === 'ShortName')?.text, 'Lindenau <&>');
  assert.equal(parsed.find((e) => e.name === 'InputEncoding')?.text, 'UTF-8');
  const urls = parsed.filter((e) => e.name === 'Url').map((e) => [e.attributes['type'], e.attributes['template']]);
  assert.deepEqual(urls, [
    ['text/html', `http://${host}/search?q={searchTerms}`],
    ['application/x-suggestions+json', `http://${host}/api/suggest?q={searchTerms}&format=opensearch`],
    ['application/opensearchdescription+xml', `http://${host}/opensearch.xml`],
  ]);

  const named = await get(`${http}/opensearch.xml`, { host: 'localhost:8080', 'x-forwarded-proto': 'https' });
  assert.match(named.body, /template="https:\/\/localhost:8080\/search\?q=\{searchTerms\}"/);
  // A Host that is not this searcher never gets a description naming it.
  assert.equal((await get(`${http}/opensearch.xml`, { host: 'evil.example' })).status, 421);

  const page = await get(`${http}/`);
  assert.match(page.body, /<link rel="search" type="application\/opensearchdescription\+xml" title="Lindenau &#60;&#38;&#62;" href="\/opensearch.xml">/);
  const results = await get(`${http}/search?q=detective`);
  assert.match(results.body, /<link rel="search" type="application\/opensearchdescription\+xml"/);
});
