/**
 * Feedback: what the indexer tells the shepherd about each URL it indexed
 * (seed "Feedback from indexer to gatherer"; sherlock-original §4:
 * `feedback-gath`), published in every index version as the file `Feedback`.
 * The shepherd reads it from `state/index/current/Feedback` into
 * urldb.feedback(): the weight steers what is fetched first, a duplicate is
 * fetched again only max_refetch after its last fetch (its representative
 * at its own interval).
 *
 *   Header fields (file.ts): 0 record count N
 *   Body: N records of 22 bytes, in card id order, one per card
 *     0   16  footprint of the card's URL (url.ts)
 *     16   4  card id (the seed's 0x20000000 bit for URLs not downloaded is
 *             never set: every record is a card)
 *     20   1  CARD_FLAG bits of CardInfo (cardinfo.ts): empty, dup, …
 *     21   1  static weight 0–255, as in CardInfo
 */

import { CountingWriter, IndexFileReader, recordCount, type IndexFormat } from './file.js';
import { MAX_CARD_ID } from './refs.js';

/** Its name in an index version's directory. */
export const FEEDBACK_NAME = 'Feedback';
export const FEEDBACK_FORMAT: IndexFormat = { magic: 'SHERLOCK-FEEDBCK', version: 1, fields: ['records'], what: 'Feedback' };
export const FOOTPRINT_SIZE = 16;
export const FEEDBACK_RECORD = 22;

export interface FeedbackRecord {
  footprint: Buffer;
  cardId: number;
  flags: number;
  weight: number;
}

export class FeedbackWriter extends CountingWriter {
  private readonly record = Buffer.alloc(FEEDBACK_RECORD);

  constructor(file: string) {
    super(file, FEEDBACK_FORMAT);
  }

  add(entry: FeedbackRecord): void {
    if (entry.footprint.length !== FOOTPRINT_SIZE) throw new RangeError(`a footprint is ${FOOTPRINT_SIZE} bytes, not ${entry.footprint.length}`);
    if (!Number.isInteger(entry.cardId) || entry.cardId < 0 || entry.cardId > MAX_CARD_ID) throw new RangeError(`card id ${entry.cardId} outside 0–${MAX_CARD_ID}`);
    entry.footprint.copy(this.record, 0);
    this.record.writeUInt32LE(entry.cardId, 16);
    this.record.writeUInt8(entry.flags, 20);
    this.record.writeUInt8(entry.weight, 21);
    this.out.write(this.record);
    this.count += 1;
  }
}

/** Every record of a Feedback file, read in blocks; card ids must increase. */
export function* readFeedback(path: string): IterableIterator<FeedbackRecord> {
  const file = IndexFileReader.open(path, FEEDBACK_FORMAT);
  try {
    recordCount(file, FEEDBACK_RECORD, file.fields[0]!);
    let last = -1;
    for (const { offset, data } of file.records(FEEDBACK_RECORD, file.fields[0]!)) {
      const cardId = data.readUInt32LE(16);
      if (cardId <= last || cardId > MAX_CARD_ID) throw file.corrupt(offset + 16, `card id ${cardId} after ${last}`);
      last = cardId;
      yield { footprint: Buffer.from(data.subarray(0, FOOTPRINT_SIZE)), cardId, flags: data[20]!, weight: data[21]! };
    }
  } finally {
    file.close();
  }
}
