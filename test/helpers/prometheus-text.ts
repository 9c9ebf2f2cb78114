/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests
 * of /metrics: stricter than Prometheus itself, so that what it accepts any
 * scraper accepts. It refuses, naming the line:
 *   - metric and label names outside [a-zA-Z_:][a-zA-Z0-9_:]* and
 *     [a-zA-Z_][a-zA-Z0-9_]* (labels starting __ are reserved);
 *   - a sample before its family's TYPE line, a second TYPE or HELP of one
 *     family, an unknown type, a family whose lines are not together;
 *   - label syntax errors: unquoted values, escapes other than \\ \" \n, a
 *     label given twice, a trailing comma;
 *   - values that are not floats (NaN, +Inf, -Inf allowed), a negative counter;
 *   - the same series (name and label set) twice;
 *   - histograms without +Inf, with bounds out of order or counts that fall,
 *     or whose +Inf bucket differs from _count, or without _sum or _count.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

export class ExpositionError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const series = new Set<string>();
  const finished = new Set<string>();
  let current: Family | undefined;
  if (text !== '' && !text.endsWith('\n')) throw new ExpositionError(text.split('\n').length, 'the last line does not end with a newline');
  const lines = text.split('\n').slice(0, -1);
  lines.forEach((line, i) => {
    const n = i + 1;
    const fail = (message: string): never => {
      throw new ExpositionError(n, `${message}: ${JSON.stringify(line)}`);
    };
    const enter = (name: string): Family => {
      if (current?.name !== name) {
        if (current !== undefined) finished.add(current.name);
        if (finished.has(name)) fail(`family ${name} continues after another family`);
      }
      let family = families.get(name);
      if (family === undefined) families.set(name, (family = { name, type: 'untyped', samples: [] }));
      current = family;
      return family;
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (meta === null) return; // a plain comment
      const [, kind, name, rest = ''] = meta;
      if (!NAME.test(name!)) fail('bad metric name');
      const family = families.get(name!);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) fail('unknown type');
        if (family !== undefined && (family.samples.length > 0 || family.type !== 'untyped')) fail('TYPE after samples or a second TYPE');
        enter(name!).type = rest as Family['type'];
      } else {
        if (family?.help !== undefined) fail('a second HELP');
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) fail('bad escape in HELP');
        enter(name!).help = rest;
      }
      return;
    }
    const sample = parseSample(line, fail);
    const family = enter(familyOf(sample.name, families));
    if (family.type === 'counter' && (sample.value < 0 || Number.isNaN(sample.value))) fail('a counter below zero');
    const key = `${sample.name}{${Object.entries(sample.labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (series.has(key)) fail('the same series twice');
    series.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family a sample belongs to: histogram and summary samples carry suffixes. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const family = families.get(base);
    if (family !== undefined && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return name;
}

function parseSample(line: string, fail: (message: string) => never): Sample {
  const name = /^[^{ ]*/.exec(line)![0];
  if (!NAME.test(name)) fail('bad metric name');
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === '{') {
    pos += 1;
    while (line[pos] !== '}') {
      const label = /^[^=]*/.exec(line.slice(pos))![0];
      if (!LABEL.test(label) || label.startsWith('__')) fail(`bad label name ${JSON.stringify(label)}`);
      if (label in labels) fail(`label ${label} twice`);
      pos += label.length;
      if (line[pos] !== '=' || line[pos + 1] !== '"') fail('a label value must be quoted');
      pos += 2;
      let value = '';
      for (;;) {
        const c = line[pos];
        if (c === undefined) fail('unterminated label value');
        pos += 1;
        if (c === '"') break;
        if (c === '\\') {
          const e = line[pos];
          pos += 1;
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else fail('bad escape in a label value');
        } else {
          value += c;
        }
      }
      labels[label] = value;
      if (line[pos] === ',') {
        pos += 1;
        if (line[pos] === '}') fail('trailing comma in labels');
      } else if (line[pos] !== '}') {
        fail('expected , or } after a label');
      }
    }
    pos += 1;
  }
  if (line[pos] !== ' ') fail('expected one space before the value');
  const [valueText, timestamp, ...extra] = line.slice(pos + 1).split(' ');
  if (extra.length > 0 || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) fail('junk after the value');
  const value = valueText === 'NaN' ? NaN : valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : FLOAT.test(valueText ?? '') ? Number(valueText) : fail('bad value');
  return { name, labels, value };
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { buckets: [] }));
    if (s.name === `${family.name}_bucket`) {
      if (le === undefined) throw new ExpositionError(0, `${family.name}: a bucket without le`);
      const bound = le === '+Inf' ? Infinity : FLOAT.test(le) ? Number(le) : NaN;
      if (Number.isNaN(bound)) throw new ExpositionError(0, `${family.name}: le=${JSON.stringify(le)} is not a number`);
      g.buckets.push([bound, s.value]);
    } else if (s.name === `${family.name}_sum`) {
      g.sum = s.value;
    } else if (s.name === `${family.name}_count`) {
      g.count = s.value;
    } else {
      throw new ExpositionError(0, `${family.name}: sample ${s.name} in a histogram`);
    }
  }
  for (const [key, g] of groups) {
    const where = `${family.name}${key}`;
    if (g.sum === undefined || g.count === undefined) throw new ExpositionError(0, `${where}: _sum or _count missing`);
    const last = g.buckets.at(-1);
    if (last === undefined || last[0] !== Infinity) throw new ExpositionError(0, `${where}: no le="+Inf" bucket last`);
    for (let i = 1; i < g.buckets.length; i++) {
      if (g.buckets[i]![0] <= g.buckets[i - 1]![0]) throw new ExpositionError(0, `${where}: bucket bounds out of order`);
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new ExpositionError(0, `${where}: bucket counts fall`);
    }
    if (last[1] !== g.count) throw new ExpositionError(0, `${where}: +Inf bucket ${last[1]} differs from _count ${g.count}`);
  }
}

/** The value of one series, or undefined when it is not there. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}
