/**
 * One `<name>.warc.gz` per ARC file (common/archive/warc.ts): a warcinfo
 * record dated by the file's version block, then a response record per
 * capture, gzip per record; each file complete or absent (temp-file.ts).
 * Every record is dated by `captureDate`, as the CDX export dates its line.
 * A 304 Not Modified (what a recrawl of an unchanged page stores) becomes a
 * revisit record naming the 200 it confirms (revisit-originals.ts), so that
 * replay shows that page rather than a bare 304.
 */

import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { captureDate } from '../../common/archive/arc.js';
import { httpStatus, payloadDigest, payloadOffset } from '../../common/archive/digest.js';
import { captureRecord, revisitRecord, warcinfoRecord, warcRecordId } from '../../common/archive/warc.js';
import { SherlockError } from '../../common/errors.js';
import type { ArcInput } from './arc-input.js';
import { RevisitOriginals } from './revisit-originals.js';
import { TempFile } from './temp-file.js';

export function exportWarc(files: string[], input: ArcInput, outDir: string): void {
  if (!existsSync(outDir)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'output directory does not exist', { file: outDir });
  const originals = new RevisitOriginals();
  for (const path of files) {
    const name = basename(path).replace(/\.arc(\.gz)?$/, '') + '.warc.gz';
    const out = new TempFile(join(outDir, name));
    const reader = input.open(path);
    try {
      const fileDate = reader.versionDate();
      let warcinfoId: string | undefined;
      for (const record of reader.records()) {
        const { header } = record;
        const date = captureDate(header.date, fileDate);
        if (warcinfoId === undefined) {
          // The version block (or, in files without one, the first record) dates the warcinfo record.
          const info = warcinfoRecord({
            filename: name,
            date,
            info: [
              { name: 'software', value: 'sherlock export warc' },
              { name: 'format', value: 'WARC File Format 1.0' },
              { name: 'conformsTo', value: 'http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf' },
              { name: 'description', value: `converted from the ARC file ${basename(path)}` },
            ],
          });
          warcinfoId = info.id;
          out.append(info.bytes);
        }
        if (header.url.startsWith('filedesc:')) continue;
        const capture = { name: `${name}:${record.offset}`, url: header.url, ip: header.ip, date, warcinfoId };
        const status = httpStatus(record.content);
        if (status === 304) {
          out.append(revisitRecord(capture, originals.of(header.url, date)));
          continue;
        }
        const digest = payloadDigest(record.content, payloadOffset(record.content, status));
        out.append(captureRecord({ ...capture, mime: header.mime, content: record.content, digest }));
        if (status === 200) originals.note(header.url, date, digest, warcRecordId(capture.name));
      }
      out.finish();
    } catch (err) {
      out.abandon();
      throw err;
    } finally {
      reader.close();
    }
  }
}
