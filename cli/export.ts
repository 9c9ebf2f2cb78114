/**
 * `sherlock export cdx|warc`: Wayback indexes and WARC files from ARC files
 * (docs/wayback.md), either the crawl's own (`--state DIR`: every finished
 * file in `<state>/gather/arc`, `.open` ones skipped, in name order) or any
 * given on the command line (`--arc FILE…`).
 *
 * - `cdx` writes the byte-sorted 11-field CDX with its legend (or CDXJ with
 *   `--format cdxj`) to `--out FILE` (`-` for stdout) and/or a ZipNum cluster
 *   into `--zipnum DIR`. Lines go through an external sort, so memory stays
 *   bounded whatever the number of records. A file appears under its name
 *   only once complete (written as `<FILE>.tmp`, then renamed).
 * - `nutch` writes an Apache Nutch crawl directory (cli/export-nutch.ts).
 * - `warc` writes `<name>.warc.gz` into `--out DIR` for each ARC file
 *   (`common/archive/warc.ts`), likewise complete or absent.
 *
 * ARC files are read strictly: the first damage stops the command with exit 1,
 * naming the file and offset. `--lenient` reads past damage as pywb does:
 * each problem is one stderr line, every readable record is exported, and the
 * exit status is 1 when there was any problem.
 */

import { closeSync, existsSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { normalizeArcDate } from '../common/archive/arc.js';
import { readArc, type ArcRecord } from '../common/archive/arc-read.js';
import { CDX_LEGEND } from '../common/archive/cdx.js';
import { ioError, SherlockError } from '../common/errors.js';
import { ExternalSorter } from '../common/external-sort.js';
import { writeAt } from '../common/files.js';
import { parseSize } from '../common/units.js';
import { captureRecord, warcinfoRecord } from '../common/archive/warc.js';
import { ZipNumWriter } from '../common/archive/zipnum.js';
import { arcDir } from '../gatherer/store.js';
import { STATE_HELP, action, print, printBytes, printJson, stateDir } from './command.js';
import { cdxLines, type CdxFormat } from './cdx-lines.js';
import { exportNutch } from './export-nutch.js';

interface SourceOptions {
  state?: string;
  arc?: string[];
  lenient?: boolean;
}

interface CdxOptions extends SourceOptions {
  out?: string;
  format: CdxFormat;
  zipnum?: string;
  blockLines: number;
  sortMemory: number;
}

export function registerExport(program: Command): void {
  const exp = program.command('export').description('export the archive: Wayback indexes (CDX, CDXJ, ZipNum), WARC, a Nutch crawl');

  sources(exp.command('cdx'))
    .description('a byte-sorted CDX or CDXJ index of ARC files, as pywb and OpenWayback read it')
    .option('--out <file>', 'index file, `-` for stdout')
    .addOption(new Option('--format <format>', 'line format').choices(['cdx', 'cdxj']).default('cdx'))
    .option('--zipnum <dir>', 'also write a ZipNum cluster (index.idx, index.loc, index-NNNNN.cdx.gz) into this directory')
    .option('--block-lines <n>', 'ZipNum lines per block', positiveInteger, 3000)
    .option('--sort-memory <size>', 'memory for sorting before spilling runs to disk', sizeArg, 32 * 1024 * 1024)
    .action(action((opts: CdxOptions) => exportCdx(opts)));

  sources(exp.command('warc'))
    .description('one .warc.gz per ARC file: warcinfo, then a response record per capture, gzip per record')
    .requiredOption('--out <dir>', 'directory for the WARC files')
    .action(action((opts: SourceOptions & { out: string }) => exportWarc(opts)));

  exp
    .command('nutch')
    .description('an Apache Nutch crawl directory: crawldb from the URL database, linkdb and one segment of the copies held')
    .option('--state <dir>', STATE_HELP)
    .requiredOption('--out <dir>', 'crawl directory to create (must not exist)')
    .option('--sort-memory <size>', 'memory for sorting the linkdb\'s links before spilling runs to disk', sizeArg, 16 * 1024 * 1024)
    .option('--parts <n>', 'reduce parts per directory, keys spread by Text hash as Hadoop does', positiveInteger, 1)
    .option('--no-crc', 'leave out Hadoop’s .crc side files')
    .option('--json', 'print the counts as one JSON object')
    .action(
      action(async (opts: { state?: string; out: string; sortMemory: number; parts: number; crc: boolean; json?: boolean }) => {
        const report = await exportNutch(stateDir(opts), { out: opts.out, sortMemory: opts.sortMemory, checksum: opts.crc, parts: opts.parts });
        if (opts.json === true) printJson(report);
        else print(`${report.urls} URLs, segment ${report.segment} of ${report.documents} documents, ${report.linkedUrls} URLs with inlinks: ${report.bytes} bytes in ${opts.out}`);
      }),
    );
}

function sources(command: Command): Command {
  return command
    .option('--state <dir>', STATE_HELP)
    .option('--arc <file...>', 'ARC files (.arc or .arc.gz) instead of the crawl’s')
    .option('--lenient', 'read past damage as pywb does, reporting each problem; exit 1 if any');
}

function positiveInteger(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n === 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

function sizeArg(text: string): number {
  const n = parseSize(text);
  if (n === undefined || n <= 0) throw new InvalidArgumentError('expected a size such as 64MiB');
  return n;
}

/** The ARC files to export: those given, or the finished ones of the crawl in name order. */
function arcFiles(opts: SourceOptions): string[] {
  if (opts.arc !== undefined) {
    if (opts.state !== undefined) throw new SherlockError('SHERLOCK_USAGE', 'give --state or --arc, not both');
    return opts.arc;
  }
  const dir = arcDir(stateDir(opts));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw ioError(err, dir, 'listing ARC files');
  }
  return names
    .filter((name) => /\.arc(\.gz)?$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Records of one file, strict or lenient; problems of lenient reading go to stderr and are counted. */
class Reading {
  problems = 0;

  constructor(private readonly lenient: boolean) {}

  records(path: string): Iterable<ArcRecord> {
    return this.lenient ? readArc(path, { onProblem: (problem) => this.report(problem) }) : readArc(path);
  }

  report(problem: SherlockError): void {
    this.problems += 1;
    process.stderr.write(`sherlock: ${problem.describe()}\n`);
  }

  get status(): number {
    return this.problems === 0 ? 0 : 1;
  }
}

/** A file written as `<path>.tmp` and renamed to `path` once complete, or removed. */
class TempFile {
  /** The file being written, renamed to the final name by `finish`. */
  readonly temp: string;
  private readonly fd: number;
  size = 0;

  constructor(private readonly path: string) {
    this.temp = `${path}.tmp`;
    try {
      this.fd = openSync(this.temp, 'w');
    } catch (err) {
      throw ioError(err, this.temp, 'create');
    }
  }

  append(bytes: Buffer): void {
    writeAt(this.fd, this.temp, bytes, this.size);
    this.size += bytes.length;
  }

  finish(): void {
    closeSync(this.fd);
    try {
      renameSync(this.temp, this.path);
    } catch (err) {
      throw ioError(err, this.path, 'rename');
    }
  }

  abandon(): void {
    closeSync(this.fd);
    rmSync(this.temp, { force: true });
  }
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

async function exportCdx(opts: CdxOptions): Promise<number> {
  if (opts.out === undefined && opts.zipnum === undefined) throw new SherlockError('SHERLOCK_USAGE', 'give --out FILE (or -) and/or --zipnum DIR');
  const files = arcFiles(opts);
  const reading = new Reading(opts.lenient === true);
  const sorter = new ExternalSorter({ memoryBudget: opts.sortMemory });
  const lineOptions = { format: opts.format, lenient: opts.lenient === true, sortMemory: opts.sortMemory };
  const report = (problem: SherlockError): void => reading.report(problem);
  try {
    if (opts.out !== undefined && opts.out !== '-' && opts.zipnum === undefined) {
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
      return reading.status;
    }
    await cdxLines(files, lineOptions, sorter, report);
    const zipnum = opts.zipnum === undefined ? undefined : new ZipNumWriter(opts.zipnum, { blockLines: opts.blockLines });
    const toStdout = opts.out === '-';
    const file = opts.out === undefined || toStdout ? undefined : new TempFile(opts.out);
    const fileBatch = new LineBatch();
    const stdoutBatch = new LineBatch();
    let stdoutOpen = toStdout;
    try {
      // The legend goes first (its leading SP sorts it there anyway); ZipNum shards hold none.
      if (opts.format === 'cdx') {
        fileBatch.push(CDX_LEGEND);
        stdoutBatch.push(CDX_LEGEND);
      }
      for (const line of sorter.sorted()) {
        if (file !== undefined && fileBatch.push(line)) file.append(fileBatch.take());
        zipnum?.add(line);
        if (stdoutOpen && stdoutBatch.push(line)) stdoutOpen = await printBytes([stdoutBatch.take()]);
      }
      file?.append(fileBatch.take());
      if (stdoutOpen) await printBytes([stdoutBatch.take()]);
      zipnum?.close();
      file?.finish();
    } catch (err) {
      file?.abandon();
      throw err;
    }
  } finally {
    sorter.discard();
  }
  return reading.status;
}

async function exportWarc(opts: SourceOptions & { out: string }): Promise<number> {
  const files = arcFiles(opts);
  const reading = new Reading(opts.lenient === true);
  if (!existsSync(opts.out)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'output directory does not exist', { file: opts.out });
  for (const path of files) {
    const name = basename(path).replace(/\.arc(\.gz)?$/, '') + '.warc.gz';
    const out = new TempFile(join(opts.out, name));
    try {
      let warcinfoId: string | undefined;
      let fileDate: string | undefined;
      for (const record of reading.records(path)) {
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
  return reading.status;
}
