import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const script = join(dirname(fileURLToPath(import.meta.url)), '../../bench/peers/bare-indexer.js');

/** The bare indexer's file read back: per word, its pages and each page's positions. */
function readBack(file: string): Map<string, Array<[number, number[]]>> {
  const bytes = readFileSync(file);
  const end = bytes.indexOf('\n\n');
  let at = end + 2;
  const out = new Map<string, Array<[number, number[]]>>();
  for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) {
    const [word, length] = line.split('\t');
    const stop = at + Number(length);
    const varint = (): number => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const b = bytes[at++]!;
        value += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) return value;
      }
    };
    const pages: Array<[number, number[]]> = [];
    let page = 0;
    while (at < stop) {
      page += varint();
      const positions: number[] = [];
      let last = -1;
      for (let gap = varint(); gap !== 0; gap = varint()) positions.push((last += gap));
      pages.push([page, positions]);
    }
    out.set(word!, pages);
  }
  return out;
}

test('the bare indexer lists every word with its pages and positions, folded as FTS5 folds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bare-'));
  try {
    const text = join(dir, 'text.tsv');
    writeFileSync(text, ['0\thttp://a/\tThe Café\tthe cafe opens; THE end', '1\thttp://b/\tNothing\tan end to the end'].join('\n') + '\n');
    const out = JSON.parse(execFileSync(process.execPath, [script, text, join(dir, 'out')], { encoding: 'utf8' })) as { docs: number };
    assert.equal(out.docs, 2);
    const index = readBack(join(dir, 'out'));
    // Title positions first, then the body after a gap of one.
    assert.deepEqual(index.get('the'), [[0, [0, 3, 6]], [1, [5]]]);
    assert.deepEqual(index.get('cafe'), [[0, [1, 4]]]);
    assert.deepEqual(index.get('end'), [[0, [7]], [1, [3, 6]]]);
    assert.deepEqual([...index.keys()], [...index.keys()].sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
