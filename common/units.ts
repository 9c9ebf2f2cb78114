/**
 * Durations and sizes written with units, as operators write them in config
 * and on the command line: "500ms", "30s", "1h30m", "2d"; "64MiB", "100MB", "4096".
 *
 * Parsing is strict: a duration needs a unit on every number (is "5" seconds or
 * milliseconds?), a size without a unit is bytes. Binary units (KiB, MiB, GiB,
 * TiB) are powers of 1024, decimal ones (kB, MB, GB, TB) powers of 1000.
 */

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Milliseconds for a duration such as "1h30m", or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const part = /(\d+(?:\.\d+)?)\s*([a-z]+)/gy;
  let total = 0;
  let end = 0;
  for (let m = part.exec(trimmed); m !== null; m = part.exec(trimmed)) {
    const unit = DURATION_UNITS[m[2]!.toLowerCase()];
    if (unit === undefined) return undefined;
    total += Number(m[1]) * unit;
    end = part.lastIndex;
  }
  if (end === 0 || end !== trimmed.length || !Number.isFinite(total)) return undefined;
  return Math.round(total);
}

/** Bytes for a size such as "64MiB" or "4096", or undefined when it is not one. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  if (m === null) return undefined;
  const unit = m[2] === '' ? 1 : SIZE_UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
