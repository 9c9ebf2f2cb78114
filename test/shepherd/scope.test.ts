/**
 * Crawl scope and trap defence (shepherd/scope.ts): each rule with URLs it takes
 * and URLs it refuses; session-ID stripping as a property (many variants, one
 * URL); host, domain and any scope over subdomains, public suffixes (ICANN and
 * private) and IP addresses; the calendar and session-ID traps staying inside
 * their bounds; bad patterns refused at config load with the key and entry named.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { loadConfig, type ConfigInputs } from '../../common/config.js';
import { isSherlockError, SherlockError } from '../../common/errors.js';
import { canonicalUrl, MAX_URL_LENGTH } from '../../common/url.js';
import { shepherdConfig, type ShepherdConfig } from '../../shepherd/config.js';
import { Scope, seedHost, type JudgeFrom, type RejectReason } from '../../shepherd/scope.js';
import { scratchDir } from '../helpers/paths.js';

const RUNS = { numRuns: 300 };

/** The [shepherd] defaults with `overrides` applied, through the schema as the loader would. */
function config(overrides: Record<string, unknown> = {}): ShepherdConfig {
  return shepherdConfig.parse(overrides);
}

function scope(seeds: string[], overrides: Record<string, unknown> = {}): Scope {
  return new Scope(config(overrides), seeds.map(seedHost));
}

/** A link found on `from` at `depth`. */
const on = (url: string, depth = 0): JudgeFrom => ({ url, depth });
const SEED: JudgeFrom = { seed: true };

function taken(s: Scope, url: string, from: JudgeFrom): { url: string; depth: number } {
  const verdict = s.judge(url, from);
  assert.ok(verdict.ok, `expected ${url} to be taken, got ${verdict.ok ? '' : verdict.reason}`);
  return { url: verdict.url, depth: verdict.depth };
}

function refused(s: Scope, url: string, from: JudgeFrom): RejectReason {
  const verdict = s.judge(url, from);
  assert.ok(!verdict.ok, `expected ${url} to be refused, got ${verdict.ok ? verdict.url : ''}`);
  return verdict.reason;
}

// ---------------------------------------------------------------- normalising

test('normalise strips session parameters from the query, any case, and keeps the rest in order', () => {
  const s = scope([]);
  assert.equal(s.normalise('http://Example.com/a?b=1&PHPSESSID=abc&c=2'), 'http://example.com/a?b=1&c=2');
  assert.equal(s.normalise('http://example.com/a?sid=1'), 'http://example.com/a');
  assert.equal(s.normalise('http://example.com/a?JSESSIONID=1&sessionid=2&session_id=3&cfid=4&cftoken=5'), 'http://example.com/a');
  assert.equal(s.normalise('http://example.com/a?ASPSESSIONIDQQ=x&utm_source=feed&utm_medium=rss&q=1'), 'http://example.com/a?q=1');
  assert.equal(s.normalise('http://example.com/a?%73id=1&x'), 'http://example.com/a?x', 'escaped names are canonical first');
  // Not session parameters: a longer name, a value called sid, a prefix that is not one.
  assert.equal(s.normalise('http://example.com/a?sidebar=1&x=sid&utmost=2'), 'http://example.com/a?sidebar=1&x=sid&utmost=2');
});

test('normalise strips ;jsessionid path parameters and keeps other path parameters', () => {
  const s = scope([]);
  assert.equal(s.normalise('http://example.com/shop/cart;jsessionid=0A1B2C?item=3'), 'http://example.com/shop/cart?item=3');
  assert.equal(s.normalise('http://example.com/a;JSESSIONID=x/b;phpsessid=y'), 'http://example.com/a/b');
  assert.equal(s.normalise('http://example.com/a;v=2;jsessionid=x;w=3/'), 'http://example.com/a;v=2;w=3/');
  assert.equal(s.normalise('http://example.com/a;v=2'), 'http://example.com/a;v=2');
});

test('normalise drops empty query pieces and is canonical and idempotent', () => {
  const s = scope([]);
  assert.equal(s.normalise('http://example.com/a?&a=1&&b=2&'), 'http://example.com/a?a=1&b=2');
  assert.equal(s.normalise('http://example.com/a?&'), 'http://example.com/a');
  assert.equal(s.normalise('HTTP://EXAMPLE.COM:80/x/../a#frag'), 'http://example.com/a');
  assert.equal(s.normalise('b?sid=3', 'http://example.com/a/'), 'http://example.com/a/b', 'relative to a base');
  fc.assert(
    fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      let once: string;
      try {
        once = s.normalise(url);
      } catch (err) {
        if (isSherlockError(err, 'SHERLOCK_BAD_URL')) return;
        throw err;
      }
      assert.equal(canonicalUrl(once), once);
      assert.equal(s.normalise(once), once);
    }),
    RUNS,
  );
});

test('with strip_params empty nothing is stripped; operator names and prefixes are honoured', () => {
  const none = scope([], { strip_params: [] });
  assert.equal(none.normalise('http://example.com/a;jsessionid=1?sid=2'), 'http://example.com/a;jsessionid=1?sid=2');
  const s = scope([], { strip_params: ['ref', 'trk*'] });
  assert.equal(s.normalise('http://example.com/a?ref=x&TRKid=1&trk=2&sid=3'), 'http://example.com/a?sid=3');
});

test('property: every session-ID variant of a page normalises to one URL', () => {
  const s = scope(['http://example.com/']);
  const sessionId = fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/);
  const name = fc.constantFrom(
    ...['jsessionid', 'JSESSIONID', 'PHPSESSID', 'sid', 'SessionID', 'session_id', 'ASPSESSIONIDAQRS', 'CFID', 'cftoken', 'utm_campaign'],
  );
  const where = fc.constantFrom('first', 'middle', 'last', 'path');
  const plain = 'http://example.com/shop/item?id=42&page=2';
  fc.assert(
    fc.property(fc.array(fc.tuple(name, sessionId, where), { minLength: 1, maxLength: 4 }), (sessions) => {
      let path = '/shop/item';
      const query = ['id=42', 'page=2'];
      for (const [n, id, at] of sessions) {
        if (at === 'path') path += `;${n}=${id}`;
        else if (at === 'first') query.unshift(`${n}=${id}`);
        else if (at === 'middle') query.splice(1, 0, `${n}=${id}`);
        else query.push(`${n}=${id}`);
      }
      const variant = `http://example.com${path}?${query.join('&')}`;
      assert.equal(s.normalise(variant), plain);
      const verdict = s.judge(variant, on('http://example.com/'));
      assert.deepEqual(verdict, { ok: true, url: plain, depth: 1 });
    }),
    RUNS,
  );
});

// ---------------------------------------------------------------- the rules one by one

test('scheme: only http and https URLs with a canonical form are taken', () => {
  const s = scope(['http://example.com/'], { scope: 'any' });
  for (const url of ['ftp://example.com/a', 'mailto:a@example.com', 'javascript:alert(1)', 'http://', 'http://[::1', 'data:text/plain,x']) {
    assert.equal(refused(s, url, SEED), 'scheme', url);
    assert.equal(refused(s, url, on('http://example.com/')), 'scheme', url);
  }
  assert.equal(refused(s, 'not a url', SEED), 'scheme', 'a seed is never relative');
  assert.equal(taken(s, 'not a url', on('http://example.com/')).url, 'http://example.com/not%20a%20url', 'a link may be');
  taken(s, 'https://example.com/', SEED);
  taken(s, 'HTTP://example.com/b', on('http://example.com/'));
});

test('length: URLs over max_url_length are refused, seeds included; stripped parameters do not count', () => {
  const s = scope(['http://example.com/'], { max_url_length: 64 });
  const base = 'http://example.com/';
  const fits = base + 'a'.repeat(64 - base.length);
  assert.equal(fits.length, 64);
  taken(s, fits, SEED);
  taken(s, fits, on(base));
  assert.equal(refused(s, fits + 'a', SEED), 'length');
  assert.equal(refused(s, fits + 'a', on(base)), 'length');
  assert.equal(taken(s, `${fits};jsessionid=${'X'.repeat(200)}`, on(base)).url, fits);
  assert.equal(refused(scope([]), 'http://example.com/' + 'a'.repeat(MAX_URL_LENGTH), SEED), 'length');
  assert.equal(config().max_url_length, 1024);
});

test('denied: deny host patterns refuse hosts, seeds and allowed hosts included', () => {
  const s = scope(['http://example.com/'], {
    scope: 'domain',
    allow: ['*.example.org'],
    deny: ['private.example.com', '*.ads.example.com', '*.bad.example.org', '[::1]'],
  });
  assert.equal(refused(s, 'http://private.example.com/', SEED), 'denied');
  assert.equal(refused(s, 'http://private.example.com/x', on('http://example.com/')), 'denied');
  assert.equal(refused(s, 'http://ads.example.com/', on('http://example.com/')), 'denied', '*. covers the domain itself');
  assert.equal(refused(s, 'http://x.y.ads.example.com/', on('http://example.com/')), 'denied');
  assert.equal(refused(s, 'http://a.bad.example.org/', on('http://example.com/')), 'denied', 'deny beats allow');
  assert.equal(refused(s, 'http://[0:0::1]:8080/', SEED), 'denied', 'IPv6 compared in canonical form');
  taken(s, 'http://public.example.com/', on('http://example.com/'));
  taken(s, 'http://notads.example.com/', on('http://example.com/'));
  taken(s, 'http://good.example.org/', on('http://example.com/'));
});

test('pattern: deny_patterns refuse URLs they match, tested on the normalised URL', () => {
  const s = scope(['http://example.com/'], { deny_patterns: ['/cgi-bin/', '[?&]sort=', '\\.(?:zip|iso)$', '^https://'] });
  assert.equal(refused(s, 'http://example.com/cgi-bin/search', SEED), 'pattern');
  assert.equal(refused(s, 'http://example.com/list?page=2&sort=asc', on('http://example.com/')), 'pattern');
  assert.equal(refused(s, 'http://example.com/list?sort=asc', on('http://example.com/')), 'pattern');
  assert.equal(refused(s, 'http://example.com/debian.iso', on('http://example.com/')), 'pattern');
  assert.equal(refused(s, 'HTTPS://example.com/', on('http://example.com/')), 'pattern', 'scheme is lower case when tested');
  taken(s, 'http://example.com/list?resort=1', on('http://example.com/'));
  taken(s, 'http://example.com/debian.iso.html', on('http://example.com/'));
  // The session parameter is gone before the pattern looks, so `sid=` patterns see nothing.
  taken(scope(['http://example.com/'], { deny_patterns: ['sid='] }), 'http://example.com/a?sid=1', on('http://example.com/'));
});

test('scope host: the seeds hosts on any port or scheme; not their subdomains or parents', () => {
  const s = scope(['http://example.com/', 'https://docs.example.org/start']);
  const from = on('http://example.com/');
  taken(s, 'https://example.com/a', from);
  taken(s, 'http://example.com:8080/a', from);
  taken(s, 'http://EXAMPLE.com/a', from);
  taken(s, 'http://docs.example.org/b', from);
  assert.equal(refused(s, 'http://www.example.com/', from), 'scope');
  assert.equal(refused(s, 'http://example.org/', from), 'scope');
  assert.equal(refused(s, 'http://other.net/', from), 'scope');
  taken(s, 'http://other.net/', SEED);
});

test('allow widens host scope: exact hosts and *.domain with its subdomains at any depth', () => {
  const s = scope(['http://example.com/'], { allow: ['cdn.example.net', '*.example.org', 'Bücher.example', '192.0.2.7'] });
  const from = on('http://example.com/');
  taken(s, 'http://cdn.example.net/lib.js', from);
  assert.equal(refused(s, 'http://img.cdn.example.net/', from), 'scope', 'an exact pattern has no subdomains');
  taken(s, 'http://example.org/', from);
  taken(s, 'http://a.b.example.org/', from);
  assert.equal(refused(s, 'http://notexample.org/', from), 'scope');
  taken(s, 'http://xn--bcher-kva.example/', from);
  taken(s, 'http://192.0.2.7:81/', from);
});

test('scope domain: one registrable domain by the Public Suffix List, private suffixes included', () => {
  const s = scope(['http://a.example.co.uk/', 'https://alice.github.io/blog/', 'http://www.example.com/'], { scope: 'domain' });
  const from = on('http://a.example.co.uk/');
  taken(s, 'http://b.example.co.uk/', from);
  taken(s, 'http://example.co.uk/', from);
  taken(s, 'http://x.y.example.co.uk:8443/', from);
  assert.equal(refused(s, 'http://other.co.uk/', from), 'scope', 'co.uk is a public suffix, not a domain');
  assert.equal(refused(s, 'http://co.uk/', from), 'scope');
  taken(s, 'http://example.com/', from);
  taken(s, 'http://static.example.com/', from);
  taken(s, 'https://alice.github.io/other', from);
  taken(s, 'https://cdn.alice.github.io/', from);
  assert.equal(refused(s, 'https://bob.github.io/', from), 'scope', 'github.io is a private public suffix: another person');
  assert.equal(refused(s, 'https://github.io/', from), 'scope');
  assert.equal(refused(s, 'http://example.org/', from), 'scope');
});

test('scope domain: IPv4, IPv6 and single-label hosts compare exactly', () => {
  const s = scope(['http://192.0.2.1/', 'http://[2001:db8::1]/', 'http://localhost:8080/'], { scope: 'domain' });
  const from = on('http://192.0.2.1/');
  taken(s, 'http://192.0.2.1:8080/x', from);
  taken(s, 'http://0xc0.0.2.1/x', from);
  assert.equal(refused(s, 'http://192.0.2.2/', from), 'scope');
  assert.equal(refused(s, 'http://2.1/', from), 'scope');
  taken(s, 'http://[2001:0db8:0:0::1]:81/', from);
  assert.equal(refused(s, 'http://[2001:db8::2]/', from), 'scope');
  taken(s, 'http://localhost/', from);
  assert.equal(refused(s, 'http://a.localhost/', from), 'scope');
  const h = scope(['http://[::1]/'], { scope: 'host' });
  taken(h, 'http://[::1]:9000/', on('http://[::1]/'));
  assert.equal(refused(h, 'http://127.0.0.1/', on('http://[::1]/')), 'scope');
});

test('scope any: every host, minus deny', () => {
  const s = scope(['http://example.com/'], { scope: 'any', deny: ['*.tracker.example'] });
  const from = on('http://example.com/');
  taken(s, 'http://elsewhere.org/', from);
  taken(s, 'http://[2001:db8::5]/', from);
  assert.equal(refused(s, 'http://x.tracker.example/', from), 'denied');
  assert.equal(s.inScope('http://elsewhere.org/'), true);
  assert.equal(s.inScope('http://x.tracker.example/'), false);
  assert.equal(s.inScope('ftp://elsewhere.org/'), false);
});

test('inScope answers for a host without depth or trap rules', () => {
  const s = scope(['http://example.com/'], { allow: ['*.example.net'], deny: ['bad.example.net'] });
  assert.equal(s.inScope('http://example.com/a/a/a/a/a/a'), true);
  assert.equal(s.inScope('http://a.example.net/'), true);
  assert.equal(s.inScope('http://bad.example.net/'), false);
  assert.equal(s.inScope('http://example.org/'), false);
});

test('a link judged again gets the same verdict, its depth decided anew and a relative one resolved against its own page', () => {
  const s = scope(['http://example.com/'], { max_depth: 2 });
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(taken(s, 'http://EXAMPLE.com/a?sid=1', on('http://example.com/', 0)), { url: 'http://example.com/a', depth: 1 });
    assert.equal(refused(s, 'http://example.com/a?sid=1', on('http://example.com/', 2)), 'depth');
    assert.equal(refused(s, 'http://other.example/', on('http://example.com/', 2)), 'scope');
    assert.equal(refused(s, 'http://example.com/x/x/x/x/x/x', on('http://example.com/', 2)), 'depth');
    assert.equal(refused(s, 'http://example.com/x/x/x/x/x/x', on('http://example.com/', 0)), 'repeats');
    assert.deepEqual(taken(s, 'http://other.example/', SEED), { url: 'http://other.example/', depth: 0 });
    assert.deepEqual(taken(s, 'b', on('http://example.com/one/', 0)), { url: 'http://example.com/one/b', depth: 1 });
    assert.deepEqual(taken(s, 'b', on('http://example.com/two/', 0)), { url: 'http://example.com/two/b', depth: 1 });
    assert.deepEqual(taken(s, 'http:b', on('http://example.com/three/', 0)), { url: 'http://example.com/three/b', depth: 1 });
  }
});

test('depth: seeds are depth 0, a link is one deeper than its page, and no deeper than max_depth', () => {
  const s = scope(['http://example.com/'], { max_depth: 2 });
  assert.deepEqual(s.judge('http://example.com/', SEED), { ok: true, url: 'http://example.com/', depth: 0 });
  assert.equal(taken(s, 'http://example.com/a', on('http://example.com/', 0)).depth, 1);
  assert.equal(taken(s, 'http://example.com/b', on('http://example.com/a', 1)).depth, 2);
  assert.equal(refused(s, 'http://example.com/c', on('http://example.com/b', 2)), 'depth');
  assert.equal(taken(s, 'http://example.com/deep', SEED).depth, 0, 'seeds are not subject to depth');
  const relative = taken(s, '../c?x=1#f', on('http://example.com/a/b/', 0));
  assert.equal(relative.url, 'http://example.com/a/c?x=1', 'relative links resolve against the page');
  const seedsOnly = scope(['http://example.com/'], { max_depth: 0 });
  assert.equal(refused(seedsOnly, 'http://example.com/a', on('http://example.com/', 0)), 'depth');
});

test('repeats: a path segment more than max_path_repeats times is a trap', () => {
  const s = scope(['http://example.com/']);
  const from = on('http://example.com/');
  taken(s, 'http://example.com/a/b/a/b/a/b', from);
  taken(s, 'http://example.com/2024/01/01/01/', from);
  assert.equal(refused(s, 'http://example.com/a/b/a/b/a/b/a/b', from), 'repeats');
  assert.equal(refused(s, 'http://example.com/x/x/x/x', from), 'repeats');
  assert.equal(refused(s, 'http://example.com/x//y//z//w//', from), 'repeats', 'empty segments count');
  taken(s, 'http://example.com/x/x/x/x', SEED);
  const strict = scope(['http://example.com/'], { max_path_repeats: 1 });
  taken(strict, 'http://example.com/a/b/c/', from);
  assert.equal(refused(strict, 'http://example.com/a/b/a', from), 'repeats');
  // The segment relative-link loop: each page links `a/b/` from inside itself.
  let page = 'http://example.com/a/b/';
  let hops = 0;
  for (;;) {
    const verdict = s.judge('a/b/', on(page, hops));
    if (!verdict.ok) {
      assert.equal(verdict.reason, 'repeats');
      break;
    }
    page = verdict.url;
    hops += 1;
  }
  assert.equal(hops, 2);
});

test('params: more than max_query_params query parameters is a trap; stripped ones do not count', () => {
  const s = scope(['http://example.com/']);
  const from = on('http://example.com/');
  const query = (n: number): string => Array.from({ length: n }, (_, i) => `f${i}=1`).join('&');
  taken(s, `http://example.com/s?${query(12)}`, from);
  assert.equal(refused(s, `http://example.com/s?${query(13)}`, from), 'params');
  taken(s, `http://example.com/s?${query(12)}&sid=1&utm_source=x`, from);
  taken(s, `http://example.com/s?${query(13)}`, SEED);
  const none = scope(['http://example.com/'], { max_query_params: 0 });
  taken(none, 'http://example.com/s', from);
  taken(none, 'http://example.com/s?sid=1', from);
  assert.equal(refused(none, 'http://example.com/s?q', from), 'params');
});

test('the first failing rule names the reason: scheme, length, denied, pattern, scope, depth, repeats, params', () => {
  const s = scope(['http://example.com/'], { max_url_length: 100, deny: ['*.no.example'], deny_patterns: ['/private/'], max_depth: 1 });
  const deep = on('http://example.com/', 1);
  assert.equal(refused(s, 'http://x.no.example/' + 'a'.repeat(200), deep), 'length');
  assert.equal(refused(s, 'http://x.no.example/private/', deep), 'denied');
  assert.equal(refused(s, 'http://other.example/private/', deep), 'pattern');
  assert.equal(refused(s, 'http://other.example/x/x/x/x', deep), 'scope');
  assert.equal(refused(s, 'http://example.com/x/x/x/x', deep), 'depth');
  assert.equal(refused(s, 'http://example.com/x/x/x/x?' + 'a&'.repeat(20), on('http://example.com/', 0)), 'repeats');
});

// ---------------------------------------------------------------- traps over a crawl

test('calendar trap: /cal?d=N linking to d=N+1 stops at max_depth', () => {
  for (const max_depth of [0, 3, 16]) {
    const s = scope(['http://cal.example/'], { max_depth });
    const seen: string[] = [];
    let verdict = s.judge('http://cal.example/cal?d=0', SEED);
    let d = 0;
    while (verdict.ok) {
      seen.push(verdict.url);
      assert.equal(verdict.depth, d);
      d += 1;
      verdict = s.judge(`/cal?d=${d}`, on(verdict.url, verdict.depth));
    }
    assert.deepEqual(verdict, { ok: false, reason: 'depth' });
    assert.equal(seen.length, max_depth + 1, 'd=0 .. d=max_depth');
    assert.equal(seen.at(-1), `http://cal.example/cal?d=${max_depth}`);
  }
});

test('session-ID site: pages that link each other with a fresh session ID each time stay one URL per page', () => {
  const s = scope(['http://shop.example/']);
  const pages = ['/', '/a', '/b', '/c'];
  const known = new Map<string, number>();
  const frontier: Array<{ url: string; depth: number }> = [];
  const seed = s.judge('http://shop.example/;jsessionid=SEED', SEED);
  assert.ok(seed.ok);
  known.set(seed.url, 0);
  frontier.push(seed);
  let sessions = 0;
  let links = 0;
  while (frontier.length > 0 && links < 10_000) {
    const page = frontier.shift()!;
    // Every view hands out new session IDs, in the path and in the query.
    for (const target of pages) {
      sessions += 1;
      const link =
        sessions % 2 === 0
          ? `${target};jsessionid=${sessions}?PHPSESSID=${sessions}`
          : `${target}?sid=${sessions}&utm_source=s${sessions}`;
      links += 1;
      const verdict = s.judge(link, page);
      if (!verdict.ok || known.has(verdict.url)) continue;
      known.set(verdict.url, verdict.depth);
      frontier.push(verdict);
    }
  }
  assert.deepEqual([...known.keys()].sort(), pages.map((p) => `http://shop.example${p}`).sort());
  assert.ok(links < 100, `the crawl ended on its own after ${links} links`);
});

// ---------------------------------------------------------------- config

/** A config file holding `text` under [shepherd]. */
function shepherdFile(t: test.TestContext, text: string): string {
  const file = join(scratchDir(t, 'sherlock-scope-'), 'sherlock.toml');
  writeFileSync(file, `[shepherd]\n${text}`);
  return file;
}

/** The loader takes a whole-file schema; here [shepherd] is its only table. */
const fileSchema = z.object({ shepherd: shepherdConfig.prefault({}) }).strict();

function loadShepherd(inputs: ConfigInputs): ShepherdConfig {
  return loadConfig(fileSchema, inputs).config.shepherd;
}

function configError(run: () => unknown): SherlockError {
  try {
    run();
  } catch (err) {
    assert.ok(isSherlockError(err, 'SHERLOCK_BAD_CONFIG'), `expected a config error, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a config error');
}

test('config defaults: the trap limits and the session parameters', () => {
  const c = config();
  assert.equal(c.max_url_length, 1024);
  assert.equal(c.max_path_repeats, 3);
  assert.equal(c.max_query_params, 12);
  assert.deepEqual(c.allow, []);
  assert.deepEqual(c.deny, []);
  assert.deepEqual(c.deny_patterns, []);
  assert.deepEqual(c.strip_params, ['jsessionid', 'phpsessid', 'sid', 'sessionid', 'session_id', 'aspsessionid*', 'cfid', 'cftoken', 'utm_*']);
});

test('config: a deny_patterns entry that is not a regular expression is refused, naming the key and the entry', (t) => {
  const file = shepherdFile(t, 'deny_patterns = ["/ok/", "(unclosed", "[z-a]"]\n');
  const err = configError(() => loadShepherd({ file, env: {} }));
  assert.equal(err.place.key, 'shepherd.deny_patterns');
  assert.match(
    err.message,
    /^shepherd\.deny_patterns: entry 1 \("\(unclosed"\) is not a valid regular expression: .*\(from .*sherlock\.toml:2\)$/,
  );
  const parsed = shepherdConfig.safeParse({ deny_patterns: ['a', 'b', '*'] });
  assert.equal(parsed.success, false);
  assert.match(parsed.error!.issues[0]!.message, /^entry 2 \("\*"\) is not a valid regular expression/);
  const fromSet = loadShepherd({ sets: ['shepherd.deny_patterns=/cgi-bin/, [?&]sort='], env: {} });
  assert.deepEqual(fromSet.deny_patterns, ['/cgi-bin/', '[?&]sort=']);
});

test('config: allow and deny take host patterns only; strip_params takes names', () => {
  for (const bad of ['example.com:8080', 'example.com/path', 'http://example.com', '*.', '*.192.0.2.1', 'a.*.example', '', ' example.com', '::1']) {
    const parsed = shepherdConfig.safeParse({ allow: ['ok.example', bad] });
    assert.equal(parsed.success, false, JSON.stringify(bad));
    assert.match(parsed.error!.issues[0]!.message, /^entry 1 /);
  }
  assert.equal(shepherdConfig.safeParse({ deny: ['x.example', '[::1]', '*.example.net', 'Bücher.example', '10.0.0.1'] }).success, true);
  const err = configError(() => loadShepherd({ sets: ['shepherd.deny=ok.example,bad host'], env: {} }));
  assert.match(err.message, /^shepherd\.deny: entry 1 \("bad host"\): expected a host/);
  for (const bad of ['', 'a=b', 'a&b', 'ut*m', 'x y']) {
    assert.equal(shepherdConfig.safeParse({ strip_params: [bad] }).success, false, JSON.stringify(bad));
  }
  assert.equal(shepherdConfig.safeParse({ max_url_length: MAX_URL_LENGTH + 1 }).success, false);
  assert.equal(shepherdConfig.safeParse({ max_path_repeats: 0 }).success, false);
});

test('a Scope refuses a seed without a canonical form', () => {
  assert.throws(
    () => scope(['ftp://example.com/']),
    (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'),
  );
});
