import assert from 'node:assert/strict';
import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { isSherlockError } from '../../../common/errors.js';
import {
  AWAITING_DNS,
  HOST_RECORD_SIZE,
  HostFile,
  queueKeyKind,
  queueKeyOf,
  queueKeyText,
  reservedQueueKey,
} from '../../../common/gather/host-file.js';
import { flip } from '../../helpers/damage.js';
import { scratchDir } from '../../helpers/paths.js';

function hostFile(t: TestContext): string {
  const path = join(scratchDir(t), 'hosts');
  HostFile.create(path);
  return path;
}

function withHosts<T>(path: string, body: (hosts: HostFile) => T): T {
  const hosts = HostFile.open(path);
  try {
    return body(hosts);
  } finally {
    hosts.close();
  }
}

function throwsCorrupt(run: () => unknown, file: string, offset: number, message: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_QUEUE'), String(err));
    assert.deepEqual(err.place, { file, offset });
    assert.match(err.message, message);
    return true;
  });
}

test('records keep every field across reopening and are found by site', (t) => {
  const path = hostFile(t);
  const key = queueKeyOf('192.0.2.7');
  withHosts(path, (hosts) => {
    const a = hosts.add('http', 80, 'example.com');
    const b = hosts.add('https', 443, '[2001:db8::1]');
    assert.deepEqual([a.slot, b.slot], [1, 2]);
    hosts.update(a, {
      readPage: 3, readOffset: 40, writePage: 9, writeOffset: 2048, pushed: 0xffffffff, consumed: 7, priority: 5,
      objectCounts: [1, 2, 3, 0xffffffff], robotsOid: 77, robotsTime: 1_700_000_000, errorCount: 2, backoffUntil: 1_700_000_060, queueKey: key,
    });
    assert.throws(() => hosts.update(b, { readPage: 2 ** 32 }), RangeError);
    assert.throws(() => hosts.add('http', 80, 'example.com'), /exists/);
  });
  assert.equal(statSync(path).size, 3 * HOST_RECORD_SIZE);
  withHosts(path, (hosts) => {
    assert.equal(hosts.count, 2);
    const a = hosts.find('http', 80, 'example.com')!;
    assert.deepEqual(a, {
      slot: 1, scheme: 'http', port: 80, name: 'example.com',
      readPage: 3, readOffset: 40, writePage: 9, writeOffset: 2048, pushed: 0xffffffff, consumed: 7, priority: 5,
      objectCounts: [1, 2, 3, 0xffffffff], robotsOid: 77, robotsTime: 1_700_000_000, errorCount: 2, backoffUntil: 1_700_000_060, queueKey: key,
    });
    assert.equal(hosts.find('https', 443, '[2001:db8::1]')?.slot, 2);
    assert.equal(hosts.find('http', 8080, 'example.com'), undefined);
    assert.equal(hosts.get(3), undefined);
  });
});

test('names of 1 to 253 printable ASCII characters and ports 1 to 65535 are accepted', (t) => {
  withHosts(hostFile(t), (hosts) => {
    hosts.add('http', 65535, 'a'.repeat(253));
    assert.throws(() => hosts.add('http', 80, 'a'.repeat(254)), (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE'));
    assert.throws(() => hosts.add('http', 80, ''), (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE'));
    assert.throws(() => hosts.add('http', 80, 'bad host'), (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE'));
    assert.throws(() => hosts.add('http', 0, 'a.test'), RangeError);
  });
});

test('a flipped bit in a record stops opening, naming the record offset', (t) => {
  const path = hostFile(t);
  withHosts(path, (hosts) => {
    for (let i = 0; i < 5; i++) hosts.add('http', 80, `h${i}.test`);
  });
  flip(path, 3 * HOST_RECORD_SIZE + 130, 0x04);
  throwsCorrupt(() => HostFile.open(path), path, 3 * HOST_RECORD_SIZE, /host record 3: CRC-32 mismatch/);
});

test('a damaged header stops opening', (t) => {
  const path = hostFile(t);
  flip(path, 3, 0x04);
  throwsCorrupt(() => HostFile.open(path), path, 0, /not a host file/);
});

test('a torn end (part of a record, or a last record never written) is cut', (t) => {
  const path = hostFile(t);
  withHosts(path, (hosts) => hosts.add('http', 80, 'kept.test'));
  appendFileSync(path, Buffer.alloc(HOST_RECORD_SIZE)); // appended; the disk never got its bytes
  appendFileSync(path, Buffer.alloc(100, 1));
  withHosts(path, (hosts) => {
    assert.equal(hosts.cut, HOST_RECORD_SIZE + 100);
    assert.equal(hosts.count, 1);
    assert.equal(hosts.add('http', 80, 'next.test').slot, 2);
  });
  withHosts(path, (hosts) => assert.deepEqual([hosts.cut, hosts.count], [0, 2]));
});

test('queue keys hold IPv4 as IPv4-mapped IPv6, IPv6 as is, and the reserved kinds', () => {
  const v4 = queueKeyOf('192.0.2.7');
  assert.equal(v4.toString('hex'), '00000000000000000000ffffc0000207');
  assert.equal(queueKeyText(v4), '192.0.2.7');
  assert.equal(queueKeyOf('::ffff:192.0.2.7').toString('hex'), v4.toString('hex'));
  const v6 = queueKeyOf('2001:db8:0:0:1:0:0:1');
  assert.equal(v6.toString('hex'), '20010db8000000000001000000000001');
  assert.equal(queueKeyText(v6), '2001:db8::1:0:0:1');
  assert.equal(queueKeyText(queueKeyOf('fe80::1%eth0')), 'fe80::1');
  assert.equal(queueKeyText(queueKeyOf('::1')), '::1');
  assert.equal(queueKeyKind(v6), 'ip');
  assert.equal(queueKeyKind(AWAITING_DNS), 'awaiting-dns');
  assert.equal(queueKeyKind(reservedQueueKey('not-ip')), 'not-ip');
  assert.equal(reservedQueueKey('unresolvable', Buffer.from([9])).toString('hex'), '7f020900000000000000000000000000');
  assert.equal(queueKeyText(reservedQueueKey('unresolvable')), 'unresolvable');
  assert.throws(() => queueKeyOf('::'), RangeError, 'the unspecified address is no peer');
  assert.throws(() => queueKeyOf('example.com'), RangeError);
  assert.throws(() => queueKeyOf('7f01::1'), RangeError, 'reserved space');
});
