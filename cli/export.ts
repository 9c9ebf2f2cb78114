/**
 * `sherlock export cdx|warc|nutch`: Wayback indexes and WARC files from ARC
 * files (docs/wayback.md), either the crawl's own (`--state DIR`: every
 * finished file in `<state>/gather/arc`, `.open` ones skipped, in name order)
 * or any given on the command line (`--arc FILE…`), and an Apache Nutch crawl
 * directory (docs/nutch.md). The engines are in exporter/.
 *
 * - `cdx` writes the byte-sorted 11-field CDX with its legend (or CDXJ with
 *   `--format cdxj`) to `--out FILE` (`-` for stdout) and/or a ZipNum cluster
 *   into `--zipnum DIR` (exporter/wayback/cdx-export.ts); `--arc` files may
 *   be WARC files too (told apart by content); 304 Not Modified captures are
 *   left out unless `--include-304`.
 * - `warc` writes `<name>.warc.gz` into `--out DIR` for each ARC file
 *   (exporter/wayback/warc-export.ts).
 * - `nutch` writes an Apache Nutch crawl directory (exporter/nutch/export.ts).
 *
 * A file appears under its name only once complete. ARC files are read
 * strictly: the first damage stops the command with exit 1, naming the file
 * and offset. `--lenient` reads past damage as pywb does: each problem is one
 * stderr line, every readable record is exported, and the exit status is 1
 * when there was any problem.
 */

import { InvalidArgumentError, Option, type Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { parseSize } from '../common/units.js';
import { exportNutch } from '../exporter/nutch/export.js';
import { ArcInput, crawlArcFiles } from '../exporter/wayback/arc-input.js';
import { exportCdx } from '../exporter/wayback/cdx-export.js';
import type { CdxFormat } from '../exporter/wayback/cdx-lines.js';
import { exportWarc } from '../exporter/wayback/warc-export.js';
import { STATE_HELP, action, print, printBytes, printJson, stateDir } from './command.js';

interface SourceOptions {
  state?: string;
  arc?: string[];
  lenient?: boolean;
}

interface CdxOptions extends SourceOptions {
  out?: string;
  format: CdxFormat;
  include304?: boolean;
  zipnum?: string;
  blockLines: number;
  sortMemory: number;
}

export function registerExport(program: Command): void {
  const exp = program.command('export').description('export the archive: Wayback indexes (CDX, CDXJ, ZipNum), WARC, a Nutch crawl');

  sources(exp.command('cdx'))
    .description('a byte-sorted CDX or CDXJ index of ARC or WARC files, as pywb and OpenWayback read it')
    .option('--out <file>', 'index file, `-` for stdout')
    .addOption(new Option('--format <format>', 'line format').choices(['cdx', 'cdxj']).default('cdx'))
    .option('--zipnum <dir>', 'also write a ZipNum cluster (index.idx, index.loc, index-NNNNN.cdx.gz) into this directory')
    .option('--block-lines <n>', 'ZipNum lines per block', positiveInteger, 3000)
    .option('--sort-memory <size>', 'memory for sorting before spilling runs to disk', sizeArg, 32 * 1024 * 1024)
    .option('--include-304', 'also index 304 Not Modified captures, which IA’s CDX-Writer (and we by default) leave out')
    .action(action((opts: CdxOptions) => cdx(opts)));

  sources(exp.command('warc'))
    .description('one .warc.gz per ARC file: warcinfo, then a response record per capture, gzip per record')
    .requiredOption('--out <dir>', 'directory for the WARC files')
    .action(action((opts: SourceOptions & { out: string }) => warc(opts)));

  exp
    .command('nutch')
    .description('an Apache Nutch crawl directory: crawldb from the URL database, linkdb and one segment of the copies held')
    .option('--state <dir>', STATE_HELP)
    .requiredOption('--out <dir>', 'crawl directory to create (must not exist)')
    .option('--sort-memory <size>', 'memory for sorting the linkdb\'s links before spilling runs to disk', sizeArg, 16 * 1024 * 1024)
    .option('--parts <n>', 'reduce parts per directory, keys spread by Text hash as Hadoop does', positiveInteger, 1)
    .option('--no-crc', 'leave out Hadoop’s .crc side files')
    .option('--internal-links', 'keep links within a host in the linkdb (Nutch leaves them out: linkdb.ignore.internal.links)')
    .option('--json', 'print the counts as one JSON object')
    .action(
      action(async (opts: { state?: string; out: string; sortMemory: number; parts: number; crc: boolean; internalLinks?: boolean; json?: boolean }) => {
        const report = await exportNutch(stateDir(opts), { out: opts.out, sortMemory: opts.sortMemory, checksum: opts.crc, parts: opts.parts, internalLinks: opts.internalLinks === true });
        if (opts.json === true) printJson(report);
        else print(`${report.urls} URLs, segment ${report.segment} of ${report.documents} documents, ${report.linkedUrls} URLs with inlinks: ${report.bytes} bytes in ${opts.out}`);
      }),
    );
}

function sources(command: Command): Command {
  return command
    .option('--state <dir>', STATE_HELP)
    .option('--arc <file...>', 'ARC files (.arc or .arc.gz) instead of the crawl’s; `export cdx` also takes WARC files')
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

/** The ARC files to export: those given, or the finished ones of the crawl. */
function arcFiles(opts: SourceOptions): string[] {
  if (opts.arc === undefined) return crawlArcFiles(stateDir(opts));
  if (opts.state !== undefined) throw new SherlockError('SHERLOCK_USAGE', 'give --state or --arc, not both');
  return opts.arc;
}

/** Reading that reports each problem on stderr. */
function arcInput(opts: SourceOptions): ArcInput {
  return new ArcInput(opts.lenient === true, (problem) => process.stderr.write(`sherlock: ${problem.describe()}\n`));
}

async function cdx(opts: CdxOptions): Promise<number> {
  if (opts.out === undefined && opts.zipnum === undefined) throw new SherlockError('SHERLOCK_USAGE', 'give --out FILE (or -) and/or --zipnum DIR');
  const files = arcFiles(opts);
  const input = arcInput(opts);
  const toStdout = opts.out === '-';
  await exportCdx(files, input, {
    format: opts.format,
    out: toStdout ? undefined : opts.out,
    stream: toStdout ? printBytes : undefined,
    zipnum: opts.zipnum,
    blockLines: opts.blockLines,
    sortMemory: opts.sortMemory,
    notModified: opts.include304 === true,
  });
  return input.problems === 0 ? 0 : 1;
}

function warc(opts: SourceOptions & { out: string }): number {
  const files = arcFiles(opts);
  const input = arcInput(opts);
  exportWarc(files, input, opts.out);
  return input.problems === 0 ? 0 : 1;
}
