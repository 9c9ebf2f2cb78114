/**
 * The byte-sorted 11-field CDX with its legend, or CDXJ, of ARC files, into
 * a file, a writer (stdout) and/or a ZipNum cluster (docs/wayback.md). Lines
 * go through an external sort, so memory stays bounded whatever the number
 * of records; a file appears under its name only once complete
 * (temp-file.ts). With a file as the only output the reading threads merge
 * into it themselves (cdx-lines.ts); otherwise this thread merges and hands
 * the lines to each output in large batches.
 */

import { CDX_LEGEND } from '../../common/archive/cdx.js';
import { ZipNumWriter } from '../../common/archive/zipnum.js';
import type { SherlockError } from '../../common/errors.js';
import { ExternalSorter } from '../../common/external-sort.js';
import type { ArcInput } from './arc-input.js';
import { cdxLines, type CdxFormat } from './cdx-lines.js';
import { TempFile } from './temp-file.js';

export interface CdxExportOptions {
  format: CdxFormat;
  /** The index file. */
  out?: string;
  /** Takes the index's bytes too (stdout); false once it wants no more. */
  stream?: (parts: readonly Buffer[]) => Promise<boolean>;
  /** A ZipNum cluster's directory. */
  zipnum?: string;
  /** ZipNum lines per block. */
  blockLines: number;
  /** Bytes of lines the sort holds before spilling runs to disk. */
  sortMemory: number;
  /** Keep 304 Not Modified captures (left out by default, as IA's CDX-Writer does). */
  notModified?: boolean;
}

/** Lines (byte strings) gathered into large writes, copied straight into a buffer: joining strings first cost as much again. */
class LineBatch {
  private static readonly SIZE = 256 * 1024;
  private bytes = Buffer.allocUnsafe(LineBatch.SIZE);
  private size = 0;

  /** Adds a line; true once the batch is worth writing. */
  push(line: string): boolean {
    const need = this.size + line.length + 1;
    if (need > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, LineBatch.SIZE));
      this.bytes.copy(bigger, 0, 0, this.size);
      this.bytes = bigger;
    }
    this.size += this.bytes.write(line, this.size, 'latin1');
    this.bytes[this.size++] = 0x0a;
    return this.size >= LineBatch.SIZE;
  }

  /** The lines so far, in a buffer of their own. */
  take(): Buffer {
    const taken = this.bytes.subarray(0, this.size);
    this.bytes = Buffer.allocUnsafe(LineBatch.SIZE);
    this.size = 0;
    return taken;
  }
}

export async function exportCdx(files: string[], input: ArcInput, opts: CdxExportOptions): Promise<void> {
  const sorter = new ExternalSorter({ memoryBudget: opts.sortMemory });
  const lineOptions = { format: opts.format, lenient: input.lenient, notModified: opts.notModified === true, sortMemory: opts.sortMemory };
  const report = (problem: SherlockError): void => input.report(problem);
  try {
    if (opts.out !== undefined && opts.stream === undefined && opts.zipnum === undefined) {
      // A file alone: the reading threads merge the sorted lines into it too.
      const file = new TempFile(opts.out);
      try {
        if (opts.format === 'cdx') file.append(Buffer.from(CDX_LEGEND + '\n', 'latin1'));
        await cdxLines(files, { ...lineOptions, output: { path: file.temp, position: file.size } }, sorter, report);
        file.finish();
      } catch (err) {
        file.abandon();
        throw err;
      }
      return;
    }
    await cdxLines(files, lineOptions, sorter, report);
    const zipnum = opts.zipnum === undefined ? undefined : new ZipNumWriter(opts.zipnum, { blockLines: opts.blockLines });
    const file = opts.out === undefined ? undefined : new TempFile(opts.out);
    const fileBatch = new LineBatch();
    const streamBatch = new LineBatch();
    let streamOpen = opts.stream !== undefined;
    try {
      // The legend goes first (its leading SP sorts it there anyway); ZipNum shards hold none.
      if (opts.format === 'cdx') {
        fileBatch.push(CDX_LEGEND);
        streamBatch.push(CDX_LEGEND);
      }
      for (const line of sorter.sorted()) {
        if (file !== undefined && fileBatch.push(line)) file.append(fileBatch.take());
        zipnum?.add(line);
        if (streamOpen && streamBatch.push(line)) streamOpen = await opts.stream!([streamBatch.take()]);
      }
      file?.append(fileBatch.take());
      if (streamOpen) await opts.stream!([streamBatch.take()]);
      zipnum?.close();
      file?.finish();
    } catch (err) {
      file?.abandon();
      throw err;
    }
  } finally {
    sorter.discard();
  }
}
