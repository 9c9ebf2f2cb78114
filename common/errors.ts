/**
 * The one error class of sherlock.
 *
 * Every failure that crosses a module boundary is a SherlockError with a stable
 * `code` (scripts, metrics and tests match on it, never on the message), an
 * optional `cause`, and the place it concerns: a file and byte offset, a URL, or
 * a config key with the source it came from. Only the CLI turns codes into exit
 * statuses (see `exitStatus`).
 */

export const ERROR_CODES = {
  /** A config file, variable or --set value is malformed or names an unknown key. */
  SHERLOCK_BAD_CONFIG: 'bad config',
  /** The command line itself is wrong (unknown option, missing argument). */
  SHERLOCK_USAGE: 'usage',
  /** A URL cannot be parsed or is not http(s). */
  SHERLOCK_BAD_URL: 'bad URL',
  /** An ARC file breaks its format at a given offset. */
  SHERLOCK_CORRUPT_ARC: 'corrupt ARC',
  /** A WARC file breaks its format at a given offset. */
  SHERLOCK_CORRUPT_WARC: 'corrupt WARC',
  /** A bucket file or bucket encoding breaks its format at a given offset. */
  SHERLOCK_CORRUPT_BUCKET: 'corrupt bucket',
  /** The gatherer's host file or queue file breaks its format at a given offset. */
  SHERLOCK_CORRUPT_QUEUE: 'corrupt gatherer queue',
  /** A plan file in the gatherer's inbox is cut short, damaged or malformed. */
  SHERLOCK_CORRUPT_PLAN: 'corrupt plan',
  /** A file of an index version (WordIndex, Cards, CardInfo, Lexicon, …) breaks its format at a given offset. */
  SHERLOCK_CORRUPT_INDEX: 'corrupt index file',
  /** A Hadoop SequenceFile, MapFile, `.crc` file or Nutch Writable breaks its format at a given offset. */
  SHERLOCK_CORRUPT_HADOOP: 'corrupt Hadoop file',
  /** The shepherd's SQLite URL database fails SQLite's integrity check (the offset is the damaged page's, when SQLite names one). */
  SHERLOCK_CORRUPT_URLDB: 'corrupt URL database',
  /** A gzip member inside an archive cannot be inflated. */
  SHERLOCK_CORRUPT_GZIP: 'corrupt gzip',
  /** The gatherer's status snapshot (gather/status.json) is not what it writes. */
  SHERLOCK_CORRUPT_STATUS: 'corrupt status snapshot',
  /** The takedown file (state/takedowns) has a damaged line before its last. */
  SHERLOCK_CORRUPT_TAKEDOWNS: 'corrupt takedown file',
  /** A record or bucket is larger than the configured limit. */
  SHERLOCK_TOO_LARGE: 'too large',
  /** An object asked for does not exist (deleted bucket, offset past the end). */
  SHERLOCK_NOT_FOUND: 'not found',
  /** Another process holds the writer lock of a file. */
  SHERLOCK_LOCKED: 'locked',
  /** Work was abandoned on request (a stop signal) before it finished; nothing of it was kept. */
  SHERLOCK_ABORTED: 'aborted',
  /** An operating-system call failed (the cause holds the errno error). */
  SHERLOCK_IO: 'I/O failure',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Where an error happened; every field is optional, the message names those set. */
export interface ErrorPlace {
  file?: string;
  offset?: number;
  url?: string;
  key?: string;
  /** Where a config value came from: "default", "FILE:LINE", "env NAME", "--set". */
  source?: string;
}

export class SherlockError extends Error {
  readonly code: ErrorCode;
  readonly place: ErrorPlace;

  constructor(code: ErrorCode, message: string, place: ErrorPlace = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SherlockError';
    this.code = code;
    this.place = place;
  }

  /** One line for logs and the CLI: place first, then the message. */
  describe(): string {
    const { file, offset, url } = this.place;
    const where = [file, offset === undefined ? undefined : `offset ${offset}`, url].filter((p) => p !== undefined);
    return where.length > 0 ? `${where.join(': ')}: ${this.message}` : this.message;
  }
}

export function isSherlockError(err: unknown, code?: ErrorCode): err is SherlockError {
  return err instanceof SherlockError && (code === undefined || err.code === code);
}

/** An error as it crosses between threads (a structured clone keeps no class): a SherlockError's fields, or another error's stack. */
export type ThreadError = { code: ErrorCode; message: string; place: ErrorPlace } | string;

export function toThreadError(err: unknown): ThreadError {
  if (isSherlockError(err)) return { code: err.code, message: err.message, place: err.place };
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/** The error a ThreadError stands for, on the receiving side. */
export function fromThreadError(error: ThreadError): Error {
  return typeof error === 'string' ? new Error(error) : new SherlockError(error.code, error.message, error.place);
}

/** Wraps a Node system error (ENOENT, ENOSPC, …) with the file it concerned. */
export function ioError(err: unknown, file: string, doing: string): SherlockError {
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  const detail = errno ?? (err instanceof Error ? err.message : String(err));
  return new SherlockError('SHERLOCK_IO', `${doing} failed: ${detail}`, { file }, { cause: err });
}

/** The sysexits(3) statuses the CLI uses; 78 (EX_CONFIG) stops systemd restarting us. */
export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

export function exitStatus(err: unknown): number {
  if (isSherlockError(err, 'SHERLOCK_BAD_CONFIG')) return EXIT.config;
  if (isSherlockError(err, 'SHERLOCK_USAGE')) return EXIT.usage;
  return EXIT.failure;
}
