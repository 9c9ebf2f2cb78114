import assert from 'node:assert/strict';
import test from 'node:test';
import { arcAttribute, archiveFile, archiveName, isOutsideArchive, outsideArchiveField, parseArcAttribute } from '../../../common/archive/arc-place.js';

test('ARC attributes: written forms parse back, junk is refused', () => {
  assert.deepEqual(parseArcAttribute('sherlock-20240101000000-00000.arc.gz 0 1234'), { file: 'sherlock-20240101000000-00000.arc.gz', offset: 0, length: 1234 });
  for (const junk of [undefined, '', 'file', 'file 1', 'file 1 2 3', 'fi le 1 2', 'file -1 2', 'file 1 -2', 'file 1.5 2', 'file 0x10 2', ' file 1 2', 'file 1 2 ', 'file  1 2', 'file\t1\t2', 'file 1 2\n']) {
    assert.equal(parseArcAttribute(junk), undefined, JSON.stringify(junk));
  }
});

test('ARC attributes: an imported archive is named by its absolute path, spaces and % encoded, and read where it lies', () => {
  const path = '/srv/web archive/100% done/a\tb.warc.gz';
  const field = outsideArchiveField(path);
  assert.equal(field, '/srv/web%20archive/100%25%20done/a%09b.warc.gz');
  const place = parseArcAttribute(arcAttribute({ file: field, offset: 12, length: 345 }));
  assert.deepEqual(place, { file: field, offset: 12, length: 345 });
  assert.equal(isOutsideArchive(place!.file), true);
  assert.equal(archiveFile('/state/gather/arc', place!.file), path);
  assert.equal(archiveName(place!.file), path);
  // A crawl's own ARC file stays a name in the ARC directory.
  assert.equal(archiveFile('/state/gather/arc', 'sherlock-20240101000000-00000.arc.gz'), '/state/gather/arc/sherlock-20240101000000-00000.arc.gz');
  assert.equal(archiveName('sherlock-20240101000000-00000.arc.gz'), 'sherlock-20240101000000-00000.arc.gz');
  assert.throws(() => outsideArchiveField('relative/x.warc'), RangeError);
});
