/**
 * One `<name>.warc.gz` per ARC file (common/archive/warc.ts): a warcinfo
 * record dated by the file's version block, then a response record per
 * capture, gzip per record; each file complete or absent (temp-file.ts).
 * Every record is dated by `captureDate`, as the CDX export dates its line.
 */

import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { captureDate } from '../../common/archive/arc.js';
import { captureRecord, warcinfoRecord } from '../../common/archive/warc.js';
import { SherlockError } from '../../common/errors.js';
import type { ArcInput } from './arc-input.js';
import { TempFile } from './temp-file.js';

export function exportWarc(files: string[], input: ArcInput, outDir: string): void {
  if (!existsSync(outDir)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'output directory does not exist', { file: outDir });
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
        out.append(
          captureRecord({
            name: `${name}:${record.offset}`,
            url: header.url,
            ip: header.ip,
            date,
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
    } finally {
      reader.close();
    }
  }
}
