import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const bench = join(dirname(fileURLToPath(import.meta.url)), '../../bench');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function healthy(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      get(`http://127.0.0.1:${port}/healthz`, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('bare ws server not healthy');
}

test('the bench client records answers that the bare ws server repeats under the client\'s own ids', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bare-ws-'));
  const port = await freePort();
  const answers = join(dir, 'answers.jsonl');
  const recorded = join(dir, 'recorded.jsonl');
  const queries = join(dir, 'queries.tsv');
  const hits = (url: string) => [{ url, title: 'T', snippet: '<mark>x</mark>' }];
  writeFileSync(
    answers,
    [
      { q: 'alpha', answer: JSON.stringify({ type: 'result', id: 'old1', took_ms: 0.5, total: { value: 1, relation: 'eq' }, hits: hits('http://a/') }) },
      { q: '"beta gamma"', answer: JSON.stringify({ type: 'result', id: 'old2', took_ms: 0.7, total: { value: 0, relation: 'eq' }, hits: [] }) },
    ]
      .map((line) => JSON.stringify(line) + '\n')
      .join(''),
  );
  writeFileSync(queries, 'common\talpha\nphrase2\t"beta gamma"\n');
  const server = spawn(process.execPath, [join(bench, 'peers', 'bare-ws-server.js'), answers, String(port)], { stdio: 'ignore' });
  try {
    await healthy(port);
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--experimental-websocket',
      join(bench, 'sherlock-ws-client.js'),
      `ws://127.0.0.1:${port}/`,
      queries,
      '2',
      '1',
      '2',
      '2',
      recorded,
    ]);
    const out = JSON.parse(stdout) as { latenciesMs: number[]; zeroHits: number; errors: number; top: string[][]; concurrent: { latenciesMs: number[] } };
    assert.equal(out.errors, 0);
    assert.equal(out.zeroHits, 1);
    assert.deepEqual(out.top, [['http://a/'], []]);
    assert.equal(out.latenciesMs.length, 4);
    assert.equal(out.concurrent.latenciesMs.length, 4);
    // The client's first pass asked q0 and q1: the same answers come back with those ids.
    const lines = readFileSync(recorded, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { q: string; answer: string });
    assert.deepEqual(
      lines.map((line) => ({ q: line.q, answer: JSON.parse(line.answer) as unknown })),
      [
        { q: 'alpha', answer: { id: 'q0', type: 'result', took_ms: 0.5, total: { value: 1, relation: 'eq' }, hits: hits('http://a/') } },
        { q: '"beta gamma"', answer: { id: 'q1', type: 'result', took_ms: 0.7, total: { value: 0, relation: 'eq' }, hits: [] } },
      ],
    );
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bare ws server refuses an answers file whose answer has no id, naming the line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bare-ws-'));
  try {
    const answers = join(dir, 'answers.jsonl');
    writeFileSync(answers, JSON.stringify({ q: 'a', answer: '{"type":"result","id":"x"}' }) + '\n' + JSON.stringify({ q: 'b', answer: '{"type":"result"}' }) + '\n');
    await assert.rejects(promisify(execFile)(process.execPath, [join(bench, 'peers', 'bare-ws-server.js'), answers, '0']), (err: { stderr: string }) => {
      assert.match(err.stderr, /answers\.jsonl:2: the recorded answer has no id/);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
