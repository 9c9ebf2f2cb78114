/**
 * What the indexer daemon (`sherlock indexer run`) waits for: buckets stored
 * since the current index version was built. The version's Manifest records
 * the bucket file's generation and the oid after the last bucket its scan
 * read (build.ts, counts `bucket_generation` and `bucket_next`); every
 * bucket from there on is new. A bucket file of another generation (shaken
 * since) or a version without those counts makes every bucket new.
 *
 * Counting is incremental: each look reads only the buckets stored since the
 * previous look, so a large backlog is read once, not at every poll. Robots
 * buckets count too; they are few and telling them apart costs a decode.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BucketReader, bucketFilePath, oidAfter } from '../common/bucket/file.js';
import { MANIFEST_NAME, readManifest } from '../common/index/manifest.js';
import { currentVersion, indexDirectory } from '../common/index/layout.js';

export interface Backlog {
  /** The current version, if any. */
  version?: string;
  /** When it was built (Unix ms). */
  builtAt?: number;
  /** Buckets stored since it was built. */
  buckets: number;
}

export class BacklogWatch {
  private version: string | undefined;
  private builtAt: number | undefined;
  private generation = -1;
  private next = 1;
  private counted = 0;

  constructor(readonly state: string) {}

  /** Looks again: a new current version starts the count over. */
  look(): Backlog {
    const indexDir = indexDirectory(this.state);
    const version = existsSync(indexDir) ? currentVersion(indexDir) : undefined;
    if (version !== this.version) this.startAt(indexDir, version);
    const file = bucketFilePath(this.state);
    if (existsSync(file)) {
      const reader = BucketReader.open(file);
      try {
        if (reader.generation !== this.generation) {
          // Shaken since the version was built: its oids say nothing about this file.
          this.generation = reader.generation;
          this.next = 1;
          this.counted = 0;
        }
        // Damage is the scan's to report; here it only must not stop the count.
        for (const stored of reader.buckets({ from: this.next, onDamage: () => undefined })) {
          this.counted += 1;
          this.next = oidAfter(stored);
        }
      } finally {
        reader.close();
      }
    }
    return { ...(this.version === undefined ? {} : { version: this.version, builtAt: this.builtAt! }), buckets: this.counted };
  }

  private startAt(indexDir: string, version: string | undefined): void {
    this.version = version;
    this.builtAt = undefined;
    this.generation = -1;
    this.next = 1;
    this.counted = 0;
    if (version === undefined) return;
    const manifest = readManifest(join(indexDir, version, MANIFEST_NAME));
    this.builtAt = manifest.created * 1000;
    const { bucket_generation: generation, bucket_next: next } = manifest.counts;
    if (generation !== undefined && next !== undefined) {
      this.generation = generation;
      this.next = next;
    }
  }
}
