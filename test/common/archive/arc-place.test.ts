import assert from 'node:assert/strict';
import test from 'node:test';
import { parseArcAttribute } from '../../../common/archive/arc-place.js';

test('ARC attributes: written forms parse back, junk is refused', () => {
  assert.deepEqual(parseArcAttribute('sherlock-20240101000000-00000.arc.gz 0 1234'), { file: 'sherlock-20240101000000-00000.arc.gz', offset: 0, length: 1234 });
  for (const junk of [undefined, '', 'file', 'file 1', 'file 1 2 3', 'fi le 1 2', 'file -1 2', 'file 1 -2', 'file 1.5 2', 'file 0x10 2', ' file 1 2', 'file 1 2 ', 'file  1 2', 'file\t1\t2', 'file 1 2\n']) {
    assert.equal(parseArcAttribute(junk), undefined, JSON.stringify(junk));
  }
});
