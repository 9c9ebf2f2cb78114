/**
 * Name resolution for the gatherer (gatherer/dns.ts): which addresses count
 * as public, refusals of private ones, the system resolver (/etc/hosts), the
 * answer cache and the limit on lookups running at once.
 *
 * The cache and concurrency tests count lookups with a stand-in for
 * dns.promises.lookup (installed on the builtin module and pushed to its ESM
 * bindings with syncBuiltinESMExports, removed again after the test); the
 * rest use the real resolver.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { isSherlockError } from '../../common/errors.js';
import { Resolver, isPublicAddress, readHostsFile, type Resolution, type ResolverOptions } from '../../gatherer/dns.js';
import { scratchDir } from '../helpers/paths.js';

type Lookup = (name: string) => Promise<{ address: string; family: number }>;
const dnsPromises = createRequire(import.meta.url)('node:dns/promises') as { lookup: Lookup };

/** Replaces the system lookup for the rest of the test. */
function fakeLookup(t: TestContext, lookup: Lookup): void {
  const original = dnsPromises.lookup;
  dnsPromises.lookup = lookup;
  syncBuiltinESMExports();
  t.after(() => {
    dnsPromises.lookup = original;
    syncBuiltinESMExports();
  });
}

function errno(code: string): Error {
  return Object.assign(new Error(`getaddrinfo ${code}`), { code });
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function resolver(options: Partial<ResolverOptions> = {}): Resolver {
  return new Resolver({ concurrency: 4, cacheMs: 60_000, allowPrivate: false, ...options });
}

test('isPublicAddress: public v4 and v6 addresses pass, special-purpose ranges do not', () => {
  const table: Array<[string, boolean]> = [
    // public
    ['1.1.1.1', true],
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['172.15.255.255', true],
    ['172.32.0.1', true],
    ['100.63.255.255', true],
    ['100.128.0.1', true],
    ['192.0.1.1', true],
    ['198.17.255.255', true],
    ['198.20.0.1', true],
    ['223.255.255.255', true],
    ['2606:4700::1111', true],
    ['2001:4860:4860::8888', true],
    ['2a00:1450:4001::1', true],
    ['::ffff:1.1.1.1', true],
    // this network, private, loopback, link-local
    ['0.0.0.0', false],
    ['0.1.2.3', false],
    ['10.0.0.1', false],
    ['10.255.255.255', false],
    ['127.0.0.1', false],
    ['127.0.0.2', false],
    ['127.255.255.255', false],
    ['169.254.169.254', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['192.168.0.1', false],
    ['192.168.255.255', false],
    // shared address space (CGNAT), IETF protocol assignments, benchmarking
    ['100.64.0.1', false],
    ['100.127.255.255', false],
    ['192.0.0.8', false],
    ['198.18.0.1', false],
    ['198.19.255.255', false],
    // documentation
    ['192.0.2.1', false],
    ['198.51.100.7', false],
    ['203.0.113.255', false],
    // multicast, reserved, broadcast
    ['224.0.0.1', false],
    ['239.255.255.250', false],
    ['240.0.0.1', false],
    ['255.255.255.255', false],
    // IPv6 special purpose
    ['::', false],
    ['::1', false],
    ['fe80::1', false],
    ['febf:ffff::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['ff0e::1', false],
    ['2001:db8::1', false],
    ['2001:db8:ffff::1', false],
    ['100::1', false],
    ['64:ff9b:1::1', false],
    // IPv4-mapped IPv6, dotted and hexadecimal (the WHATWG URL parser writes the latter)
    ['::ffff:127.0.0.1', false],
    ['::FFFF:10.0.0.1', false],
    ['::ffff:192.168.1.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:a00:1', false],
    ['::ffff:101:101', true],
    // IPv4 inside IPv6 where it would be reached: NAT64 and 6to4 carry it
    // (public only when it is), IPv4-compatible (deprecated) and Teredo are refused whole
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::10.0.0.1', false],
    ['64:ff9b::808:808', true],
    ['2002:7f00:1::1', false],
    ['2002:c0a8:101::', false],
    ['2002:808:808::1', true],
    ['::7f00:1', false],
    ['::127.0.0.1', false],
    ['::808:808', false],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false],
    ['fe80::1%eth0', false],
    // not addresses at all
    ['', false],
    ['localhost', false],
    ['1.1.1', false],
    ['1.1.1.1.1', false],
    ['[::1]', false],
    ['256.1.1.1', false],
  ];
  const wrong = table.filter(([address, expected]) => isPublicAddress(address) !== expected);
  assert.deepEqual(wrong, [], `misjudged: ${wrong.map(([a, e]) => `${a} should be ${e ? 'public' : 'refused'}`).join(', ')}`);
});

test('a private address literal is refused when private addresses are not allowed, as v4 and as bracketed v6', async () => {
  const r = resolver();
  for (const host of ['127.0.0.2', '10.1.2.3', '[::1]', '[::ffff:7f00:1]', '[fe80::1]']) {
    const result = await r.resolve(host);
    assert.equal(result.ok, false, host);
    assert.ok(!result.ok && result.refused && !result.temporary, `${host}: ${JSON.stringify(result)}`);
    assert.match(!result.ok ? result.message : '', /private or reserved/);
  }
});

test('private address literals pass when allowed; public literals always pass, without a lookup', async (t) => {
  fakeLookup(t, () => assert.fail('an address literal was looked up'));
  assert.deepEqual(await resolver({ allowPrivate: true }).resolve('127.0.0.2'), { ok: true, address: '127.0.0.2' });
  assert.deepEqual(await resolver({ allowPrivate: true }).resolve('[::1]'), { ok: true, address: '::1' });
  assert.deepEqual(await resolver().resolve('1.1.1.1'), { ok: true, address: '1.1.1.1' });
  assert.deepEqual(await resolver().resolve('[2606:4700::1111]'), { ok: true, address: '2606:4700::1111' });
});

test('localhost resolves through /etc/hosts to a loopback address, refused unless private addresses are allowed', async () => {
  const allowed = await resolver({ allowPrivate: true }).resolve('localhost');
  assert.ok(allowed.ok, JSON.stringify(allowed));
  assert.ok(allowed.address === '127.0.0.1' || allowed.address === '::1', allowed.address);
  const refused = await resolver().resolve('localhost');
  assert.ok(!refused.ok && refused.refused && !refused.temporary, JSON.stringify(refused));
});

test('a name under .invalid is not found, a permanent failure', async () => {
  const result = await resolver({ allowPrivate: true }).resolve('no-such-host.invalid');
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.equal(result.refused, false);
  if (/EAI_AGAIN/.test(result.message)) {
    // A sandbox without any resolver cannot say "no such name"; only then is it temporary.
    assert.equal(result.temporary, true, result.message);
  } else {
    assert.match(result.message, /ENOTFOUND|ENODATA/);
    assert.equal(result.temporary, false, result.message);
  }
});

test('lookup failures: ENOTFOUND and ENODATA are permanent, anything else temporary', async (t) => {
  const codes: Record<string, string> = { 'a.example': 'ENOTFOUND', 'b.example': 'ENODATA', 'c.example': 'EAI_AGAIN', 'd.example': 'ETIMEOUT', 'e.example': 'ESERVFAIL' };
  fakeLookup(t, async (name) => {
    throw errno(codes[name]!);
  });
  const r = resolver();
  const results: Record<string, Resolution> = {};
  for (const name of Object.keys(codes)) results[name] = await r.resolve(name);
  for (const [name, code] of Object.entries(codes)) {
    const result = results[name]!;
    assert.ok(!result.ok && !result.refused, name);
    assert.equal(result.temporary, code !== 'ENOTFOUND' && code !== 'ENODATA', `${name} (${code})`);
    assert.match(result.message, new RegExp(`${name}.*${code}`));
  }
});

test('an answer is cached for cacheMs: no second lookup until it expires, then a fresh one', async (t) => {
  const lookups: string[] = [];
  fakeLookup(t, async (name) => {
    lookups.push(name);
    return { address: `93.184.216.${lookups.length}`, family: 4 };
  });
  let now = 1_000_000;
  const r = resolver({ cacheMs: 5000, now: () => now });
  const first = await r.resolve('a.example');
  assert.deepEqual(first, { ok: true, address: '93.184.216.1' });
  now += 4999;
  assert.equal(await r.resolve('a.example'), first, 'the cached answer itself');
  assert.deepEqual(lookups, ['a.example']);
  now += 1;
  assert.deepEqual(await r.resolve('a.example'), { ok: true, address: '93.184.216.2' });
  assert.deepEqual(lookups, ['a.example', 'a.example']);
  assert.deepEqual(await r.resolve('b.example'), { ok: true, address: '93.184.216.3' }, 'names are cached apart');
});

test('the answer for the real localhost is cached too', async () => {
  let now = 0;
  const r = resolver({ allowPrivate: true, cacheMs: 1000, now: () => now });
  const first = await r.resolve('localhost');
  assert.equal(await r.resolve('localhost'), first);
  now = 1000;
  const again = await r.resolve('localhost');
  assert.notEqual(again, first, 'looked up again after cacheMs');
  assert.deepEqual(again, first);
});

test('a refusal and a failure are cached for negativeCacheMs (default: cacheMs, at most a minute)', async (t) => {
  let calls = 0;
  fakeLookup(t, async () => {
    calls += 1;
    throw errno('ENOTFOUND');
  });
  let now = 0;
  const r = resolver({ cacheMs: 3_600_000, negativeCacheMs: 100, now: () => now });
  const failed = await r.resolve('gone.example');
  assert.equal(await r.resolve('gone.example'), failed);
  now = 100;
  await r.resolve('gone.example');
  assert.equal(calls, 2);
  const refusal = await r.resolve('10.0.0.1');
  assert.equal(await r.resolve('10.0.0.1'), refusal);

  const byDefault = resolver({ cacheMs: 3_600_000, now: () => now });
  const before = calls;
  const failedAgain = await byDefault.resolve('gone.example');
  now += 59_999;
  assert.equal(await byDefault.resolve('gone.example'), failedAgain);
  now += 1;
  await byDefault.resolve('gone.example');
  assert.equal(calls - before, 2, 'retried after a minute');
});

test('calls for a name already being looked up share the one lookup', async (t) => {
  let calls = 0;
  const answers: Array<() => void> = [];
  fakeLookup(t, () => {
    calls += 1;
    return new Promise((resolve) => answers.push(() => resolve({ address: '93.184.216.34', family: 4 })));
  });
  const r = resolver();
  const first = r.resolve('a.example');
  const second = r.resolve('a.example');
  assert.equal(second, first, 'the pending promise itself');
  await tick();
  assert.equal(calls, 1);
  assert.equal(r.inFlight, 1);
  answers.shift()!();
  assert.deepEqual(await second, { ok: true, address: '93.184.216.34' });
  assert.equal(r.inFlight, 0);
});

test('at most `concurrency` lookups run at once, however many names wait', async (t) => {
  let running = 0;
  let most = 0;
  const started: string[] = [];
  fakeLookup(t, async (name) => {
    started.push(name);
    running += 1;
    most = Math.max(most, running);
    // Answers come back at different speeds.
    for (let i = 0; i < 1 + (name.length % 4); i++) await tick();
    running -= 1;
    if (name.startsWith('bad')) throw errno('ENOTFOUND');
    return { address: '93.184.216.34', family: 4 };
  });
  const r = resolver({ concurrency: 3 });
  const names = Array.from({ length: 20 }, (_, i) => `${i % 5 === 0 ? 'bad' : 'host'}${'x'.repeat(i % 7)}${i}.example`);
  const all = Promise.all(names.map((name) => r.resolve(name)));
  assert.equal(r.inFlight, 20, 'inFlight counts the waiting ones too');
  const results = await all;
  assert.equal(most, 3);
  assert.deepEqual([...started].sort(), [...names].sort(), 'each name looked up once');
  assert.equal(results.filter((x) => x.ok).length, 16);
  assert.equal(r.inFlight, 0);
});

test('lookups started from answers (a crawler resolving as it goes) stay within the limit', async (t) => {
  let running = 0;
  let most = 0;
  fakeLookup(t, async () => {
    running += 1;
    most = Math.max(most, running);
    await tick();
    running -= 1;
    return { address: '93.184.216.34', family: 4 };
  });
  const r = resolver({ concurrency: 2 });
  let next = 0;
  const chain = async (): Promise<void> => {
    while (next < 30) await r.resolve(`n${next++}.example`);
  };
  await Promise.all([chain(), chain(), chain(), chain(), chain()]);
  assert.ok(most <= 2, `${most} lookups ran at once`);
  assert.equal(r.inFlight, 0);
});

/** A hosts file with `text` in a scratch directory. */
function hostsFile(t: TestContext, text: string): string {
  const file = join(scratchDir(t), 'hosts');
  writeFileSync(file, text);
  return file;
}

test('a hosts file pins names to addresses as /etc/hosts does: comments, several names a line, any case, the first line wins', (t) => {
  const file = hostsFile(t, '# the simulated web\n127.1.0.1  a.sim.test  www.a.sim.test # two names\n\n  127.1.0.2\tB.Sim.Test.\n::1 six.sim.test\n127.1.0.9 a.sim.test\n');
  assert.deepEqual(
    [...readHostsFile(file)],
    [
      ['a.sim.test', '127.1.0.1'],
      ['www.a.sim.test', '127.1.0.1'],
      ['b.sim.test', '127.1.0.2'],
      ['six.sim.test', '::1'],
    ],
  );
});

test('a hosts file line that is not an address and names, or a file that cannot be read, is a config error naming the file and the line', (t) => {
  for (const [text, line, says] of [
    ['127.0.0.1 ok.test\nnot-an-address bad.test\n', 2, /"not-an-address" is not an IP address/],
    ['# only\n\n127.0.0.300 bad.test\n', 3, /is not an IP address/],
    ['127.0.0.1\n', 1, /no name after the address/],
  ] as const) {
    const file = hostsFile(t, text);
    assert.throws(
      () => readHostsFile(file),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_CONFIG') && says.test(err.message) && err.message.includes(`line ${line}`) && err.place.source === `${file}:${line}`,
    );
  }
  assert.throws(() => readHostsFile(join(scratchDir(t), 'missing')), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_CONFIG') && /missing/.test(err.message));
});

test('a pinned name is answered without a lookup and checked as any answer; other names are looked up and counted', async (t) => {
  const asked: string[] = [];
  fakeLookup(t, (name) => {
    asked.push(name);
    return Promise.resolve({ address: '93.184.216.34', family: 4 });
  });
  const hosts = readHostsFile(hostsFile(t, '127.1.0.5 a.sim.test\n93.184.216.35 public.sim.test\n'));
  const allowing = resolver({ allowPrivate: true, hosts });
  assert.deepEqual(await allowing.resolve('A.sim.test'), { ok: true, address: '127.1.0.5' });
  assert.deepEqual(await allowing.resolve('a.sim.test.'), { ok: true, address: '127.1.0.5' });
  assert.equal(allowing.lookups, 0);
  const refusing = resolver({ hosts });
  const refused = await refusing.resolve('a.sim.test');
  assert.ok(!refused.ok && refused.refused, 'the hosts file does not open private addresses');
  assert.deepEqual(await refusing.resolve('public.sim.test'), { ok: true, address: '93.184.216.35' });
  assert.deepEqual(await refusing.resolve('example.test'), { ok: true, address: '93.184.216.34' });
  assert.deepEqual(asked, ['example.test']);
  assert.equal(refusing.lookups, 1);
});
