/**
 * One `<name>.warc.gz` per ARC file (common/archive/warc.ts): a warcinfo
 * record dated by the file's version block, then a response record per
 * capture, gzip per record; each file complete or absent (temp-file.ts).
 */

import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { normalizeArcDate } from '../../common/archive/arc.js';
import { captureRecord, warcinfoRecord } from '../../common/archive/warc.js';
import { SherlockError } from '../../common/errors.js';
import type { ArcInput } from './arc-input.js';
import { TempFile } from './temp-file.js';

export function exportWarc(files: string[], input: ArcInput, outDir: string): void {
  if (!existsSync(outDir)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'output directory does not exist', { file: outDir });
  for (const path of files) {
    const name = basename(path).replace(/\.arc(\.gz)?$/, '') + '.warc.gz';
    const out = new TempFile(join(outDir, name));
    try {
      let warcinfoId: string | undefined;
      let fileDate: string | undefined;
      for (const record of input.records(path)) {
        const { header } = record;
        const date = normalizeArcDate(header.date);
        if (warcinfoId === undefined) {
          // The version block (or, in files without one, the first record) dates the warcinfo record.
          fileDate = date ?? '19700101000000';
          const info = warcinfoRecord({
            filename: name,
            date: fileDate,
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
        out.append(
          captureRecord({
            name: `${name}:${record.offset}`,
            url: header.url,
            ip: header.ip,
            date: date ?? fileDate!,
            mime: header.mime,
            content: record.content,
            warcinfoId,
          }),
        );
      }
      out.finish();
    } catch (err) {
      out.abandon();
      throw err;
    }
  }
}
