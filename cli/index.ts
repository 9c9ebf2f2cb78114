/**
 * `sherlock index build --state DIR [--keep-work] [--json]`: one index
 * version from the buckets, published atomically (indexer/build.ts); progress
 * on stderr when it is a terminal, a summary on stdout at the end (cards,
 * words, postings, bytes, seconds per stage), one JSON object with --json.
 *
 * `sherlock index verify --state DIR [--all] [--json]`: the version `current`
 * names (every published version with --all), each file checked against the
 * Manifest's size and CRC-32; a file that differs is read through its format
 * so that the problem names an offset (`FILE: offset N: message`), then one
 * summary line per version. Exit 1 on any problem, or with no current version.
 *
 * `sherlock index dump FILE`: print any file of an index version readably,
 * one record per line, the format told by the file's magic, not its name;
 * `--json` prints one JSON object per record. The whole file is read and
 * checked (framing, every record, the body CRC): damage stops the dump with
 * exit 1 and a message naming the file and offset.
 *
 * Lines, per file:
 *   CardInfo      <card id> pos=<position> site=<hex> date=<unix> weight=<w> flags=<a,b|-> type=<t> length=<code>
 *   Cards         <position> <card id> <URL> <MIME> <size> <date> <ARC file>:<offset>+<length> <title>
 *   Lex*          <id> <class> <frequency> <context> <word>
 *   Lexicon       <word> <id> <class> ref_pos=<p> chain=<bytes> freq=<f> context=<c>
 *   WordIndex     <word id> <card id> <refs>    (one line per chain)
 *   StringIndex   <key hex> <card id> <refs>
 *   Fingerprints  <fingerprint hex> <card id>
 *   Links         <target fingerprint hex> <source card id> <R|Y|F|I>
 *   Manifest      format, version, created, then "count NAME N" and "file NAME SIZE CRC" lines
 *   Attributes    <card id> oid=<oid> fp=<fingerprint hex> flags=<a,b|->      (the build's working files)
 *   Feedback      <card id> fp=<footprint hex> weight=<w> flags=<a,b|->
 *   Postings      <LexRaw id> <card id> <refs>    (AnchoredPostings too)
 *   Checksums     <MD5 hex> <card id>
 *   Signatures    <card id> <min-hashes, hex, space-separated>
 *   Merges        <card id> <target or primary card id | ->
 *   RefTexts      <source card id> <target fingerprint hex> <anchor text>
 * Refs print as `<word type>@<position>` (`@edge` past the last position) and
 * `<meta type>/<weight>@<position>`. Free text that could break a line or a
 * column is printed as a JSON string.
 */

import { join } from 'node:path';
import type { Command } from 'commander';
import { META_TYPES } from '../common/bucket/doc-body.js';
import { plainText, WORD_TYPE } from '../common/bucket/doc-text.js';
import { SherlockError } from '../common/errors.js';
import { CARD_FLAG, CardInfoReader } from '../common/index/cardinfo.js';
import { CardsReader } from '../common/index/cards.js';
import { StringIndexReader, WordIndexReader, type ChainEntry } from '../common/index/chains.js';
import { readFeedback } from '../common/index/feedback.js';
import { corruptIndex, readMagic } from '../common/index/file.js';
import { Fingerprints, readLinks } from '../common/index/fingerprints.js';
import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, Lexicon, readLexList, wordClass, type LexListFormat } from '../common/index/lexicon.js';
import { checkIndexDir, readManifest } from '../common/index/manifest.js';
import { ChainDecoder, WORD_EDGE, type Ref } from '../common/index/refs.js';
import { buildIndex, STAGES, type BuildReport, type Stage } from '../indexer/build.js';
import { CURRENT, currentVersion, indexDirectory } from '../common/index/layout.js';
import { publishedVersions } from '../indexer/publish.js';
import { NOWHERE, readMerges } from '../indexer/merge.js';
import { readSignatures } from '../indexer/signatures.js';
import { readAttributes, readChecksums, readPostings, readRefTexts } from '../indexer/work-files.js';
import { action, print, printJson, STATE_HELP, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

export function registerIndex(program: Command): void {
  const index = program.command('index').description('index versions: build one, look into their files');

  index
    .command('build')
    .description('build an index version from the buckets and publish it as state/index/current')
    .option('--state <dir>', STATE_HELP)
    .option('--keep-work', "keep the stages' working files (Postings, LexRaw, …) in the version")
    .option('--json', 'print the summary as one JSON object')
    .action(action((opts: BuildOptions, cmd: Command) => build(opts, cmd.optsWithGlobals<GlobalOptions>())));

  index
    .command('verify')
    .description("check the version `current` names (or every version) file by file against its Manifest; exit 1 on any problem")
    .option('--state <dir>', STATE_HELP)
    .option('--all', 'every published version, not only the current one')
    .option('--json', 'one JSON object per problem, then one per version')
    .action(action((opts: { state?: string; all?: boolean; json?: boolean }) => verify(stateDir(opts), opts.all === true, opts.json === true)));

  index
    .command('dump')
    .description('print a file of an index version (CardInfo, Cards, Lexicon, WordIndex, …), one record per line')
    .argument('<file>', 'index file')
    .option('--json', 'one JSON object per record')
    .action(
      action((file: string, opts: { json?: boolean }) => {
        for (const record of dump(file)) {
          if (!(opts.json === true ? printJson(record.json) : print(record.line))) break;
        }
      }),
    );
}

/** `index verify`: every listed file's size and CRC-32; a damaged file is read through its format to name the offset. */
function verify(state: string, all: boolean, json: boolean): number {
  const dir = indexDirectory(state);
  const current = currentVersion(dir);
  if (current === undefined) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no current index version', { file: join(dir, CURRENT) });
  let problems = 0;
  for (const version of all ? publishedVersions(dir) : [current]) {
    const found: SherlockError[] = [];
    let files = 0;
    try {
      const checked = checkIndexDir(join(dir, version));
      files = checked.manifest.files.length;
      found.push(...checked.problems.map(locate));
    } catch (err) {
      if (!(err instanceof SherlockError)) throw err;
      found.push(err);
    }
    for (const problem of found) {
      if (json) printJson({ version, file: problem.place.file, offset: problem.place.offset, code: problem.code, message: problem.message });
      else print(problem.describe());
    }
    if (json) printJson({ version, current: version === current, files, problems: found.length, ok: found.length === 0 });
    else print(`${version}${version === current ? ' (current)' : ''}: ${files} files, ${found.length === 0 ? 'ok' : `${found.length} problems`}`);
    problems += found.length;
  }
  return problems === 0 ? 0 : 1;
}

/** The manifest says a file differs; its own reader (the one `index dump` uses) tells where, if it can. */
function locate(problem: SherlockError): SherlockError {
  const file = problem.place.file;
  if (file === undefined || problem.code !== 'SHERLOCK_CORRUPT_INDEX') return problem;
  try {
    for (const record of dump(file)) void record;
  } catch (err) {
    if (err instanceof SherlockError && err.place.offset !== undefined) return err;
  }
  return problem;
}

interface BuildOptions {
  state?: string;
  keepWork?: boolean;
  json?: boolean;
}

async function build(opts: BuildOptions, globals: GlobalOptions): Promise<number> {
  const state = stateDir(opts);
  const config = loadSettings(globals).config;
  const tty = process.stderr.isTTY;
  let shown = 0;
  const onProgress = (stage: Stage, done: number, total: number): void => {
    const now = Date.now();
    if (now - shown < 100) return;
    shown = now;
    process.stderr.write(`\r${stage} ${done}${total > done ? `/${total}` : ''}\x1b[K`);
  };
  const report = await buildIndex({ state, config: config.indexer, keepWork: opts.keepWork === true, ...(tty ? { onProgress } : {}) });
  if (tty) process.stderr.write('\r\x1b[K');
  if (opts.json === true) printJson(report);
  else print(describeBuild(report));
  return 0;
}

export function describeBuild(report: BuildReport): string {
  const stages = STAGES.map((stage) => `${stage} ${(report.stages.find((s) => s.stage === stage)?.seconds ?? 0).toFixed(2)}`).join(', ');
  return (
    `index ${report.version}: ${report.cards} cards (${report.emptyCards} empty, ${report.duplicates} duplicates), ${report.anchors} anchor texts, ${report.words} words, ${report.postings} postings, ` +
    `${report.strings} strings, ${(report.bytes / 1e6).toFixed(1)} MB in ${report.seconds.toFixed(2)} s (${stages} s), peak RSS ${Math.round(report.maxRss / 1048576)} MiB`
  );
}

interface DumpRecord {
  line: string;
  json: unknown;
}

type Dumper = (file: string) => Iterable<DumpRecord>;

const DUMPERS: Record<string, Dumper> = {
  'SHERLOCK-CARDINF': dumpCardInfo,
  'SHERLOCK-CARDS': dumpCards,
  'SHERLOCK-LEXRAW': (file) => dumpLexList(file, LEXRAW_FORMAT),
  'SHERLOCK-LEXFREQ': (file) => dumpLexList(file, LEXBYFREQ_FORMAT),
  'SHERLOCK-LEXORD': (file) => dumpLexList(file, LEXORDER_FORMAT),
  'SHERLOCK-LEXICON': dumpLexicon,
  'SHERLOCK-WORDIDX': (file) => dumpChains(WordIndexReader.open(file), String),
  'SHERLOCK-STRIDX': (file) => dumpChains(StringIndexReader.open(file), (key) => key.toString('hex')),
  'SHERLOCK-FPRINTS': dumpFingerprints,
  'SHERLOCK-LINKS': dumpLinks,
  'SHERLOCK-MANIFST': dumpManifest,
  'SHERLOCK-ATTRS': dumpAttributes,
  'SHERLOCK-POSTING': dumpPostings,
  'SHERLOCK-CHKSUMS': dumpChecksums,
  'SHERLOCK-REFTEXT': dumpRefTexts,
  'SHERLOCK-SIGNATS': dumpSignatures,
  'SHERLOCK-MERGES': dumpMerges,
  'SHERLOCK-FEEDBCK': dumpFeedback,
};

function dump(file: string): Iterable<DumpRecord> {
  const magic = readMagic(file);
  const dumper = DUMPERS[magic];
  if (dumper === undefined) throw corruptIndex(file, 0, `not an index file (magic ${JSON.stringify(magic)})`);
  return dumper(file);
}

/** Text as one column: bare when it is one run of visible characters, else a JSON string. */
function column(text: string): string {
  return /^[^\s\p{C}"\\]+$/u.test(text) ? text : JSON.stringify(text);
}

const WORD_TYPE_NAMES = Object.keys(WORD_TYPE);

function showRef(ref: Ref): string {
  if (ref.kind === 'meta') return `${META_TYPES[ref.type]}/${ref.weight}@${ref.position}`;
  return `${WORD_TYPE_NAMES[ref.type]}@${ref.position === WORD_EDGE ? 'edge' : ref.position}`;
}

function flagNames(flags: number): string[] {
  return Object.entries(CARD_FLAG).flatMap(([name, bit]) => ((flags & bit) !== 0 ? [name] : []));
}

function* dumpCardInfo(file: string): Iterable<DumpRecord> {
  let id = 0;
  for (const info of CardInfoReader.open(file)) {
    const flags = flagNames(info.flags);
    const site = info.site.toString(16).padStart(8, '0');
    yield {
      line: `${id} pos=${info.position} site=${site} date=${info.date} weight=${info.weight} flags=${flags.join(',') || '-'} type=${info.type} length=${info.length}`,
      json: { id, ...info, site, flags },
    };
    id += 1;
  }
}

function* dumpCards(file: string): Iterable<DumpRecord> {
  const reader = CardsReader.open(file);
  try {
    for (const { position, card } of reader) {
      const { arc } = card;
      yield {
        line: [position, card.cardId, column(card.url), card.type, card.size, card.date, `${arc.file}:${arc.offset}+${arc.length}`, JSON.stringify(card.title ?? '')].join(' '),
        json: { position, ...card, text: plainText(card.text) },
      };
    }
  } finally {
    reader.close();
  }
}

function* dumpLexList(file: string, format: LexListFormat): Iterable<DumpRecord> {
  for (const entry of readLexList(file, format)) {
    const kind = wordClass(entry.id)!;
    yield { line: `${entry.id} ${kind} ${entry.frequency} ${entry.context} ${column(entry.word)}`, json: { ...entry, class: kind } };
  }
}

function* dumpLexicon(file: string): Iterable<DumpRecord> {
  for (const entry of Lexicon.open(file).entries) {
    const kind = wordClass(entry.id)!;
    yield {
      line: `${column(entry.word)} ${entry.id} ${kind} ref_pos=${entry.refPos} chain=${entry.chainSize} freq=${entry.frequency} context=${entry.context}`,
      json: { ...entry, class: kind },
    };
  }
}

function* dumpChains<K>(reader: Iterable<ChainEntry<K>> & { close(): void }, show: (key: K) => string): Iterable<DumpRecord> {
  try {
    for (const entry of reader) {
      const key = show(entry.key);
      for (const chain of entry.chains) {
        yield {
          line: `${key} ${chain.cardId} ${chain.refs.map(showRef).join(' ')}`,
          json: { key, refPos: entry.refPos, cardId: chain.cardId, refs: chain.refs },
        };
      }
    }
  } finally {
    reader.close();
  }
}

function* dumpFingerprints(file: string): Iterable<DumpRecord> {
  for (const { fingerprint, cardId } of Fingerprints.open(file)) {
    const hex = fingerprint.toString('hex');
    yield { line: `${hex} ${cardId}`, json: { fingerprint: hex, cardId } };
  }
}

function* dumpLinks(file: string): Iterable<DumpRecord> {
  for (const { target, source, type } of readLinks(file)) {
    const hex = target.toString('hex');
    yield { line: `${hex} ${source} ${type}`, json: { target: hex, source, type } };
  }
}

function* dumpManifest(file: string): Iterable<DumpRecord> {
  const manifest = readManifest(file);
  const lines = [
    `format ${manifest.format}`,
    `version ${column(manifest.version)}`,
    `created ${manifest.created}`,
    ...Object.entries(manifest.counts).map(([name, n]) => `count ${column(name)} ${n}`),
    ...manifest.files.map((f) => `file ${f.name} ${f.size} ${f.crc32}`),
  ];
  // The manifest is one record: its lines for people, one object for scripts.
  yield { line: lines.join('\n'), json: manifest };
}


function* dumpAttributes(file: string): Iterable<DumpRecord> {
  const { oids, fingerprints, flags } = readAttributes(file);
  for (let id = 0; id < oids.length; id++) {
    const fp = fingerprints.toString('hex', 12 * id, 12 * (id + 1));
    const names = flagNames(flags[id]!);
    yield { line: `${id} oid=${oids[id]} fp=${fp} flags=${names.join(',') || '-'}`, json: { id, oid: oids[id], fingerprint: fp, flags: names } };
  }
}

function* dumpPostings(file: string): Iterable<DumpRecord> {
  for (const { word, chain: bytes } of readPostings(file)) {
    const { chain } = new ChainDecoder(bytes, { file }).chainAt(0);
    yield { line: `${word} ${chain.cardId} ${chain.refs.map(showRef).join(' ')}`, json: { word, cardId: chain.cardId, refs: chain.refs } };
  }
}

function* dumpChecksums(file: string): Iterable<DumpRecord> {
  for (const { checksum, cardId } of readChecksums(file)) {
    const hex = checksum.toString('hex');
    yield { line: `${hex} ${cardId}`, json: { checksum: hex, cardId } };
  }
}

function* dumpRefTexts(file: string): Iterable<DumpRecord> {
  for (const { source, target, text } of readRefTexts(file)) {
    const hex = target.toString('hex');
    yield { line: `${source} ${hex} ${column(text)}`, json: { source, target: hex, text } };
  }
}

function* dumpSignatures(file: string): Iterable<DumpRecord> {
  for (const { cardId, hashes } of readSignatures(file)) {
    const hex = [...hashes].map((h) => h.toString(16).padStart(8, '0'));
    yield { line: `${cardId} ${hex.join(' ')}`, json: { cardId, hashes: hex } };
  }
}

function* dumpMerges(file: string): Iterable<DumpRecord> {
  const merges = readMerges(file);
  for (let id = 0; id < merges.length; id++) {
    const to = merges[id] === NOWHERE ? null : merges[id]!;
    yield { line: `${id} ${to ?? '-'}`, json: { id, to } };
  }
}

function* dumpFeedback(file: string): Iterable<DumpRecord> {
  for (const { footprint, cardId, flags, weight } of readFeedback(file)) {
    const hex = footprint.toString('hex');
    const names = flagNames(flags);
    yield { line: `${cardId} fp=${hex} weight=${weight} flags=${names.join(',') || '-'}`, json: { cardId, footprint: hex, weight, flags: names } };
  }
}
