import assert from 'node:assert/strict';
import test from 'node:test';
import { parseDuration, parseSize } from '../../common/units.js';

test('durations need a unit on every number and may combine units', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('2d'), 172_800_000);
  assert.equal(parseDuration(' 10 s '), 10_000);
  assert.equal(parseDuration('0'), 0);
  for (const bad of ['5', 'fast', '', 's', '5x', '1h 30', '-5s', '5s!']) assert.equal(parseDuration(bad), undefined, bad);
});

test('sizes take binary or decimal units, or plain bytes', () => {
  assert.equal(parseSize('4096'), 4096);
  assert.equal(parseSize('64MiB'), 64 * 2 ** 20);
  assert.equal(parseSize('100MB'), 100_000_000);
  assert.equal(parseSize('1.5KiB'), 1536);
  assert.equal(parseSize('2gib'), 2 * 2 ** 30);
  for (const bad of ['', 'big', '10 XB', '-1', '1e9', '99999999999TiB']) assert.equal(parseSize(bad), undefined, bad);
});
