/**
 * Any file of an index version, or of a build's working files, read record by
 * record for people and scripts: the engine of `sherlock index dump FILE`
 * (cli/index.ts prints it) and of the offsets `index verify` names. The
 * format is told by the file's magic, not its name. The whole file is read
 * and checked (framing, every record, the body CRC) through its own reader,
 * so damage throws the reader's SherlockError with the file and offset.
 *
 * Each record is a line and a JSON value. Lines, per file:
 *   CardInfo      <card id> pos=<position> site=<hex> date=<unix> weight=<w> flags=<a,b|-> type=<t> length=<code> lang=<language>
 *   Cards         <position> <card id> <URL> <MIME> <size> <date> <ARC file>:<offset>+<length> <title>
 *   Lex*          <id> <class> <frequency> <context> <word>
 *   Lexicon       <word> <id> <class> ref_pos=<p> chain=<bytes> freq=<f> context=<c> stem=<language>:<stem>|-
 *   WordIndex     <word id> <card id> <refs>    (one line per chain)
 *   StringIndex   <key hex> <card id> <refs>
 *   Fingerprints  <fingerprint hex> <card id>
 *   Suggestions   word <rank> <key> <text> | title <rank> card=<card id> <key> <text>
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

import { META_TYPES } from '../common/bucket/doc-body.js';
import { plainText, WORD_TYPE } from '../common/bucket/doc-text.js';
import { CARD_FLAG, CardInfoReader } from '../common/index/cardinfo.js';
import { CardsReader } from '../common/index/cards.js';
import { StringIndexReader, WordIndexReader, type ChainEntry } from '../common/index/chains.js';
import { readFeedback } from '../common/index/feedback.js';
import { corruptIndex, readMagic } from '../common/index/file.js';
import { Fingerprints, readLinks } from '../common/index/fingerprints.js';
import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, Lexicon, readLexList, wordClass, type LexListFormat } from '../common/index/lexicon.js';
import { readManifest } from '../common/index/manifest.js';
import { Suggestions, type SuggestionList } from '../common/index/suggestions.js';
import { languageOf } from '../common/language/codes.js';
import { ChainDecoder, WORD_EDGE, type Ref } from '../common/index/refs.js';
import { NOWHERE, readMerges } from './merge.js';
import { readSignatures } from './signatures.js';
import { readAttributes, readChecksums, readPostings, readRefTexts } from './work-files.js';

/** One record: its line of text and its JSON value. */
export interface DumpRecord {
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
  'SHERLOCK-SUGGEST': dumpSuggestions,
  'SHERLOCK-ATTRS': dumpAttributes,
  'SHERLOCK-POSTING': dumpPostings,
  'SHERLOCK-CHKSUMS': dumpChecksums,
  'SHERLOCK-REFTEXT': dumpRefTexts,
  'SHERLOCK-SIGNATS': dumpSignatures,
  'SHERLOCK-MERGES': dumpMerges,
  'SHERLOCK-FEEDBCK': dumpFeedback,
};

/** The records of `file`, read lazily; throws on a file that is not ours or is damaged. */
export function dumpIndexFile(file: string): Iterable<DumpRecord> {
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
      line: `${id} pos=${info.position} site=${site} date=${info.date} weight=${info.weight} flags=${flags.join(',') || '-'} type=${info.type} length=${info.length} lang=${info.language}`,
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
  for (const entry of Lexicon.open(file).all()) {
    const kind = wordClass(entry.id)!;
    yield {
      line: `${column(entry.word)} ${entry.id} ${kind} ref_pos=${entry.refPos} chain=${entry.chainSize} freq=${entry.frequency} context=${entry.context} stem=${entry.stemLanguage === 0 ? '-' : `${languageOf(entry.stemLanguage)}:${column(entry.stem)}`}`,
      json: { ...entry, stemLanguage: languageOf(entry.stemLanguage), class: kind },
    };
  }
}

function* dumpSuggestions(file: string): Iterable<DumpRecord> {
  const { words, titles } = Suggestions.open(file);
  const records = function* (kind: 'word' | 'title', list: SuggestionList): Iterable<DumpRecord> {
    for (let n = 0; n < list.count; n++) {
      const entry = { kind, rank: list.ranks[n]!, ...(kind === 'title' ? { card: list.card(n) } : {}), key: list.key(n), text: list.text(n) };
      yield { line: [kind, entry.rank, ...(kind === 'title' ? [`card=${entry.card}`] : []), column(entry.key), column(entry.text)].join(' '), json: entry };
    }
  };
  yield* records('word', words);
  yield* records('title', titles);
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
