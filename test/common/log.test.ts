import assert from 'node:assert/strict';
import test from 'node:test';
import { formatLine, logger, setLogLevel, setLogSink } from '../../common/log.js';

test('a log line carries the syslog priority prefix, component, message and fields', () => {
  assert.equal(
    formatLine('warning', 'gatherer', 'robots fetch failed', { host: 'example.org', status: 503, retry_in: '300s' }),
    '<4>gatherer: robots fetch failed host=example.org status=503 retry_in=300s',
  );
});

test('values that would break key=value splitting are quoted, and undefined fields are left out', () => {
  assert.equal(
    formatLine('info', 'x', 'm', { a: 'two words', b: 'k=v', c: '', d: undefined, e: false }),
    '<6>x: m a="two words" b="k=v" c="" e=false',
  );
});

test('newlines in messages and values cannot forge a second log line', () => {
  const line = formatLine('err', 'searcher', 'bad query\n<3>fake: injected', { q: 'a\nb' });
  assert.equal(line.includes('\n'), false);
  assert.equal(line, '<3>searcher: bad query\\n<3>fake: injected q="a\\nb"');
});

test('the level threshold drops less important events', (t) => {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  t.after(() => {
    setLogSink(previous);
    setLogLevel('info');
  });
  const log = logger('shepherd');
  setLogLevel('notice');
  log.info('hidden');
  log.notice('shown');
  log.err('also shown');
  setLogLevel('debug');
  log.debug('now shown');
  assert.deepEqual(lines, ['<5>shepherd: shown', '<3>shepherd: also shown', '<7>shepherd: now shown']);
});
