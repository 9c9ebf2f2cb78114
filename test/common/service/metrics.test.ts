/**
 * common/service/metrics.ts: what the registry writes is valid exposition text (read
 * back by the strict reader), with escaping, cumulative histogram buckets,
 * values read at scrape time and the process figures; labels outside their
 * declared sets, clashing names and falling counters are refused.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry, registerProcessMetrics } from '../../../common/service/metrics.js';
import { parseExposition, sampleValue } from '../../helpers/prometheus-text.js';

test('counters, gauges and histograms come out as valid text with their values', () => {
  const r = new Registry();
  const fetches = r.counter({ name: 'x_fetches_total', help: 'Fetches.\nBy "result" \\ class.', labels: { result: ['ok', 'odd "quoted"\\ \nvalue'] } });
  const depth = r.gauge({ name: 'x_depth', help: 'Depth.' });
  let live = 7;
  r.gauge({ name: 'x_live', help: 'Read at scrape.', read: () => live });
  const h = r.histogram({ name: 'x_seconds', help: 'Latency.', buckets: [0.1, 1, 10] });
  fetches.inc({ result: 'ok' });
  fetches.inc({ result: 'ok' }, 2);
  fetches.inc({ result: 'odd "quoted"\\ \nvalue' });
  depth.set(42);
  for (const v of [0.05, 0.5, 0.5, 5, 50]) h.observe(v);
  const text = r.expose();
  const families = parseExposition(text);
  assert.equal(families.get('x_fetches_total')!.type, 'counter');
  assert.equal(families.get('x_fetches_total')!.help, 'Fetches.\\nBy "result" \\\\ class.');
  assert.equal(sampleValue(families, 'x_fetches_total', { result: 'ok' }), 3);
  assert.equal(sampleValue(families, 'x_fetches_total', { result: 'odd "quoted"\\ \nvalue' }), 1);
  assert.equal(sampleValue(families, 'x_depth'), 42);
  assert.equal(sampleValue(families, 'x_live'), 7);
  live = 8;
  assert.equal(sampleValue(parseExposition(r.expose()), 'x_live'), 8);
  assert.deepEqual(
    ['0.1', '1', '10', '+Inf'].map((le) => sampleValue(families, 'x_seconds_bucket', { le })),
    [1, 3, 4, 5],
  );
  assert.equal(sampleValue(families, 'x_seconds_sum'), 56.05);
  assert.equal(sampleValue(families, 'x_seconds_count'), 5);
});

test('a labelled counter writes a series only once counted; an unlabelled one starts at 0', () => {
  const r = new Registry();
  r.counter({ name: 'x_total', help: 'x', labels: { result: ['ok', 'bad'] } }).inc({ result: 'bad' });
  r.counter({ name: 'y_total', help: 'y' });
  const families = parseExposition(r.expose());
  assert.equal(sampleValue(families, 'x_total', { result: 'ok' }), undefined);
  assert.equal(sampleValue(families, 'x_total', { result: 'bad' }), 1);
  assert.equal(sampleValue(families, 'y_total'), 0);
});

test('labels are bounded: a value outside the declared set, a missing or undeclared label throws', () => {
  const r = new Registry();
  const c = r.counter({ name: 'x_total', help: 'x', labels: { result: ['ok'] } });
  assert.throws(() => c.inc({ result: 'http://example.org/' }), /outside its declared set/);
  assert.throws(() => c.inc(), /outside its declared set/);
  assert.throws(() => c.inc({ result: 'ok', host: 'example.org' }), /undeclared label/);
  assert.throws(() => c.inc({ result: 'ok' }, -1), /only goes up/);
  r.gauge({ name: 'g', help: 'g', labels: { state: ['a'] }, read: () => [[{ state: 'b' }, 1]] });
  assert.throws(() => r.expose(), /outside its declared set/);
});

test('bad names, clashing families and unordered buckets are refused at declaration', () => {
  const r = new Registry();
  assert.throws(() => r.counter({ name: 'bad-name', help: 'x' }), /not a Prometheus name/);
  assert.throws(() => r.counter({ name: 'x', help: 'x', labels: { le: ['1'] } }), /not allowed/);
  r.histogram({ name: 'h', help: 'h', buckets: [1, 2] });
  assert.throws(() => r.counter({ name: 'h_count', help: 'x' }), /clashes/);
  assert.throws(() => r.histogram({ name: 'h2', help: 'h', buckets: [2, 1] }), /ascending/);
});

test('process metrics: CPU, memory, start time, open files, heap, event-loop lag and the build', () => {
  const r = new Registry();
  registerProcessMetrics(r, '9.9.9');
  const families = parseExposition(r.expose());
  assert.ok(sampleValue(families, 'process_cpu_seconds_total')! > 0);
  assert.ok(sampleValue(families, 'process_resident_memory_bytes')! > 1_000_000);
  const start = sampleValue(families, 'process_start_time_seconds')!;
  assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 2);
  assert.ok(sampleValue(families, 'process_open_fds')! > 2);
  assert.ok(sampleValue(families, 'nodejs_heap_size_used_bytes')! > 0);
  assert.ok(sampleValue(families, 'nodejs_eventloop_lag_p99_seconds')! >= 0);
  assert.equal(sampleValue(families, 'sherlock_build_info', { version: '9.9.9', node: process.version }), 1);
});
