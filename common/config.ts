/**
 * Layered configuration: one TOML table per part, each part's schema (zod) beside
 * its code holding the defaults; this module only merges and validates.
 *
 * Layers, lowest precedence first:
 *   1. defaults from the schema (`.default()` / `.prefault()` on every leaf);
 *   2. the config file (`--config`, else $CONFIGURATION_DIRECTORY/sherlock.toml,
 *      else /etc/sherlock/sherlock.toml when it exists);
 *   3. drop-ins `conf.d/*.toml` beside that file, in byte order of their names;
 *   4. environment `SHERLOCK_<TABLE>__<KEY>` (double underscore = one level);
 *   5. `--set table.key=value` on the command line, in the order given.
 *
 * Every value is validated where it enters, so an error names the key, the bad
 * value and its source ("FILE:LINE", "env NAME", "--set"); unknown keys are
 * errors with a "did you mean" hint. The loader remembers each leaf's raw value
 * and source so `sherlock config dump` can print both.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { SherlockError } from './errors.js';
import { parseDuration, parseSize } from './units.js';

/** A duration written with units ("30s", "1h30m"), validated to milliseconds. */
export function duration(bounds: { min?: string; max?: string } = {}) {
  const min = bounds.min === undefined ? undefined : parseDuration(bounds.min);
  const max = bounds.max === undefined ? undefined : parseDuration(bounds.max);
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) return fail(ctx, 'expected a duration like "2s", "500ms" or "1h30m"');
    if (min !== undefined && ms < min) return fail(ctx, `expected a duration of at least ${bounds.min}`);
    if (max !== undefined && ms > max) return fail(ctx, `expected a duration of at most ${bounds.max}`);
    return ms;
  });
}

/** A size written with units ("64MiB", "100MB") or in bytes, validated to bytes. */
export function size(bounds: { min?: string; max?: string } = {}) {
  const min = bounds.min === undefined ? undefined : parseSize(bounds.min);
  const max = bounds.max === undefined ? undefined : parseSize(bounds.max);
  return z.union([z.string(), z.number()]).transform((value, ctx) => {
    const bytes = parseSize(String(value));
    if (bytes === undefined) return fail(ctx, 'expected a size like "64MiB", "100MB" or a number of bytes');
    if (min !== undefined && bytes < min) return fail(ctx, `expected a size of at least ${bounds.min}`);
    if (max !== undefined && bytes > max) return fail(ctx, `expected a size of at most ${bounds.max}`);
    return bytes;
  });
}

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

export interface ConfigInputs {
  /** An explicit config file (`--config`); it must exist. */
  file?: string;
  /** Environment to read `SHERLOCK_…__…` overrides and $CONFIGURATION_DIRECTORY from. */
  env?: NodeJS.ProcessEnv;
  /** `key=value` strings from `--set`, in command-line order. */
  sets?: readonly string[];
}

export interface LoadedConfig<T> {
  config: T;
  /** Each leaf key (`gatherer.min_delay`) with its raw value and where it came from. */
  leaves: Map<string, { value: unknown; source: string }>;
  /** The files read, in the order they were applied. */
  files: string[];
}

type AnySchema = z.ZodType;

/**
 * A directory or file a config key names: absolute as given; relative from
 * the directory of the config file (the first file read, `files[0]`), so it
 * does not depend on the working directory (under systemd, /); as given
 * without a config file.
 */
export function configRelative(path: string, configFile: string | undefined): string {
  if (isAbsolute(path) || configFile === undefined) return path;
  return join(dirname(configFile), path);
}

/** Reads every layer, validates each value where it enters, returns the typed config. */
export function loadConfig<S extends z.ZodObject>(schema: S, inputs: ConfigInputs = {}): LoadedConfig<z.output<S>> {
  const env = inputs.env ?? process.env;
  const shape = leafSchemas(schema);
  const leaves = new Map<string, { value: unknown; source: string }>();
  for (const [key, leaf] of shape) {
    const value = rawDefault(leaf);
    if (value !== undefined) leaves.set(key, { value, source: 'default' });
  }

  const set = (key: string, value: unknown, source: string): void => {
    const leaf = shape.get(key);
    if (leaf === undefined) throw unknownKey(key, source, shape);
    const checked = leaf.safeParse(value);
    if (!checked.success) {
      const reason = checked.error.issues[0]?.message ?? 'invalid value';
      throw new SherlockError('SHERLOCK_BAD_CONFIG', `${key}: ${reason}, got ${JSON.stringify(value)} (from ${source})`, {
        key,
        source,
      });
    }
    leaves.set(key, { value, source });
  };

  const files = configFiles(inputs.file, env);
  for (const file of files) {
    const text = readConfigFile(file);
    const lines = keyLines(text);
    for (const [key, value] of flattenDocument(parseTomlFile(text, file), shape)) {
      set(key, value, `${file}:${lines.get(key) ?? '?'}`);
    }
  }
  for (const [name, text] of Object.entries(env)) {
    if (text === undefined || !name.startsWith('SHERLOCK_') || !name.includes('__')) continue;
    const key = name.slice('SHERLOCK_'.length).toLowerCase().split('__').join('.');
    set(key, coerce(shape.get(key), text), `env ${name}`);
  }
  for (const assignment of inputs.sets ?? []) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) {
      throw new SherlockError('SHERLOCK_USAGE', `--set expects key=value, got ${JSON.stringify(assignment)}`);
    }
    const key = assignment.slice(0, eq).trim();
    set(key, coerce(shape.get(key), assignment.slice(eq + 1)), '--set');
  }

  const nested: Record<string, unknown> = {};
  for (const [key, { value }] of leaves) setPath(nested, key.split('.'), value);
  const parsed = schema.safeParse(nested);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.');
    throw new SherlockError('SHERLOCK_BAD_CONFIG', `${key}: ${issue.message} (from ${leaves.get(key)?.source ?? 'default'})`, {
      key,
    });
  }
  return { config: parsed.data, leaves, files };
}

/** The file layers in order: the main file, then its conf.d drop-ins. */
function configFiles(explicit: string | undefined, env: NodeJS.ProcessEnv): string[] {
  let main = explicit;
  if (main === undefined) {
    const candidates = [env['CONFIGURATION_DIRECTORY'], '/etc/sherlock']
      .filter((dir): dir is string => dir !== undefined && dir !== '')
      .map((dir) => join(dir.split(':')[0]!, 'sherlock.toml'));
    main = candidates.find((file) => existsSync(file));
    if (main === undefined) return [];
  }
  const dropins = join(dirname(main), 'conf.d');
  const extra = existsSync(dropins)
    ? readdirSync(dropins)
        .filter((name) => name.endsWith('.toml'))
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
        .map((name) => join(dropins, name))
    : [];
  return [main, ...extra];
}

/** A config file's text; a file that does not read is SHERLOCK_BAD_CONFIG naming it. */
export function readConfigFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(err);
    throw new SherlockError('SHERLOCK_BAD_CONFIG', `${file}: cannot read config file: ${reason}`, { file }, { cause: err });
  }
}

/** A TOML document; a syntax error is SHERLOCK_BAD_CONFIG with FILE:LINE:COLUMN. */
export function parseTomlFile(text: string, file: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new SherlockError('SHERLOCK_BAD_CONFIG', `${file}:${err.line}:${err.column}: TOML syntax error: ${reason}`, {
        file,
        source: `${file}:${err.line}`,
      });
    }
    throw err;
  }
}

/** Every leaf of the schema by dotted key; tables (objects) are walked, not leaves. */
function leafSchemas(schema: z.ZodObject): Map<string, AnySchema> {
  const out = new Map<string, AnySchema>();
  const walk = (object: z.ZodObject, prefix: string): void => {
    for (const [name, child] of Object.entries(object.shape as Record<string, AnySchema>)) {
      const table = asTable(child);
      if (table !== undefined) walk(table, `${prefix}${name}.`);
      else out.set(`${prefix}${name}`, child);
    }
  };
  walk(schema, '');
  return out;
}

function asTable(schema: AnySchema): z.ZodObject | undefined {
  const inner = unwrap(schema);
  return inner instanceof z.ZodObject ? inner : undefined;
}

/** Strips default/prefault/optional wrappers and pipes down to the input type. */
function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = current.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (def.innerType !== undefined && ['default', 'prefault', 'optional', 'nullable'].includes(def.type)) {
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in !== undefined) {
      current = def.in;
    } else {
      return current;
    }
  }
}

function rawDefault(schema: AnySchema): unknown {
  const def = schema.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' || def.type === 'prefault' ? def.defaultValue : undefined;
}

/**
 * Environment and --set values are text; give the leaf the first reading it
 * accepts (the text itself, a number, a boolean), or the text so the error shows it.
 */
function coerce(schema: AnySchema | undefined, text: string): unknown {
  if (schema === undefined) return text;
  if (unwrap(schema).def.type === 'array') return text === '' ? [] : text.split(',').map((item) => item.trim());
  const readings: unknown[] = [text];
  if (/^\s*-?\d+(\.\d+)?\s*$/.test(text)) readings.push(Number(text));
  if (text === 'true' || text === 'false') readings.push(text === 'true');
  return readings.find((reading) => schema.safeParse(reading).success) ?? text;
}

/** The leaves a parsed TOML document sets: tables are walked, anything else is a leaf. */
function flattenDocument(doc: Record<string, unknown>, shape: Map<string, AnySchema>): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const walk = (node: Record<string, unknown>, prefix: string): void => {
    for (const [name, value] of Object.entries(node)) {
      const key = `${prefix}${name}`;
      if (!shape.has(key) && isPlainObject(value)) walk(value, `${key}.`);
      else out.push([key, value]);
    }
  };
  walk(doc, '');
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function unknownKey(key: string, source: string, shape: Map<string, AnySchema>): SherlockError {
  if ([...shape.keys()].some((known) => known.startsWith(`${key}.`))) {
    return new SherlockError('SHERLOCK_BAD_CONFIG', `${key}: expected a table of settings, not a value (from ${source})`, {
      key,
      source,
    });
  }
  return new SherlockError('SHERLOCK_BAD_CONFIG', `${key}: unknown key${didYouMean(key, shape.keys())} (from ${source})`, { key, source });
}

/** ", did you mean KEY?" for the known key nearest `key` (fewer than four edits away), else "". */
export function didYouMean(key: string, known: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = 4;
  for (const candidate of known) {
    const d = editDistance(key, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best === undefined ? '' : `, did you mean ${best}?`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The line of each `key = value` in a TOML text, by full dotted key. Good enough
 * for error messages: it follows [table] headers and dotted keys, not values
 * spread over several lines. The Nth `[[name]]` table (from 0) is `name.N`,
 * its header's line under that key and its keys under `name.N.key`.
 */
export function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const segment = String.raw`(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')`;
  const dotted = String.raw`${segment}(?:\s*\.\s*${segment})*`;
  const header = new RegExp(String.raw`^\[\[?\s*(${dotted})\s*\]\]?`);
  const assignment = new RegExp(String.raw`^(${dotted})\s*=`);
  const split = (key: string): string[] =>
    [...key.matchAll(new RegExp(segment, 'g'))].map((m) => m[0].replace(/^["']|["']$/g, ''));
  const arrayCounts = new Map<string, number>();
  let table: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    const h = header.exec(line);
    if (h !== null) {
      table = split(h[1]!);
      if (line.startsWith('[[')) {
        const name = table.join('.');
        const n = arrayCounts.get(name) ?? 0;
        arrayCounts.set(name, n + 1);
        table.push(String(n));
        lines.set(table.join('.'), index + 1);
      }
      return;
    }
    const a = assignment.exec(line);
    if (a === null) return;
    const key = [...table, ...split(a[1]!)].join('.');
    if (!lines.has(key)) lines.set(key, index + 1);
  });
  return lines;
}
