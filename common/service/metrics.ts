/**
 * Metrics: a small registry of counters, gauges and histograms, written in
 * the Prometheus text exposition format 0.0.4, which every daemon serves on
 * `/metrics` (common/service/metrics-listener.ts; the searcher on its own port).
 *
 * Format (prometheus.io/docs/instrumenting/exposition_formats), one family
 * after another, each as:
 *
 *   # HELP <name> <help, with \ and newline escaped as \\ and \n>
 *   # TYPE <name> counter|gauge|histogram
 *   <name>{<label>="<value>",…} <number>          one line per series
 *   <name>_bucket{…,le="<bound>"} <count>          histograms: one per bound,
 *   <name>_bucket{…,le="+Inf"} <count>               cumulative, then +Inf,
 *   <name>_sum{…} <number>                           the sum of observations
 *   <name>_count{…} <count>                          and their number
 *
 * Label values escape \ " and newline as \\ \" \n. Numbers are JavaScript's
 * shortest form, or NaN, +Inf, -Inf.
 *
 * Labels are bounded by construction: each metric declares its label names
 * and, for every name, the closed set of values it may take (the fetch
 * outcomes, the URL states, …). A value outside the set is our bug and
 * throws; so no metric grows a series per URL or per host. Series of a
 * labelled counter are written from the first increment; histograms' buckets
 * are fixed when declared.
 *
 * Values read at scrape time (process figures, queue depths) come from a
 * metric's `read` callback or from hooks passed to onCollect(), which run
 * before each exposition.
 */

import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export type LabelSpec = Readonly<Record<string, readonly string[]>>;
export type Labels = Readonly<Record<string, string>>;

interface Declared {
  name: string;
  help: string;
  labels?: LabelSpec;
}

export interface CounterOptions extends Declared {
  /** Reads the value(s) at scrape time instead of inc(): a number, or one per label set. */
  read?: () => number | readonly [Labels, number][];
}

export type GaugeOptions = CounterOptions;

export interface HistogramOptions extends Declared {
  /** Upper bounds, ascending; +Inf is added. */
  buckets: readonly number[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Buckets for durations from 5 ms to 2.5 s (searches). */
export const FAST_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
/** Buckets for durations from 50 ms to 2 min (fetches, builds). */
export const SLOW_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

abstract class Metric {
  readonly name: string;
  readonly help: string;
  private readonly spec: LabelSpec;
  private readonly names: string[];

  constructor(options: Declared, readonly type: 'counter' | 'gauge' | 'histogram') {
    if (!NAME.test(options.name)) throw new Error(`metric name ${JSON.stringify(options.name)} is not a Prometheus name`);
    this.name = options.name;
    this.help = options.help;
    this.spec = options.labels ?? {};
    this.names = Object.keys(this.spec);
    for (const label of this.names) {
      if (!LABEL.test(label) || label.startsWith('__') || label === 'le') throw new Error(`${this.name}: label name ${JSON.stringify(label)} not allowed`);
    }
  }

  /** The series key of a label set, checked against the declared names and values. */
  protected key(labels: Labels | undefined): string {
    const given = labels ?? {};
    const extra = Object.keys(given).find((name) => !(name in this.spec));
    if (extra !== undefined) throw new Error(`${this.name}: undeclared label ${extra}`);
    return this.names
      .map((name) => {
        const value = given[name];
        if (value === undefined || !this.spec[name]!.includes(value)) throw new Error(`${this.name}: label ${name}=${JSON.stringify(value)} outside its declared set`);
        return `${name}="${escapeLabel(value)}"`;
      })
      .join(',');
  }

  /** The sample lines of this metric. */
  abstract samples(): string[];
}

class Scalar extends Metric {
  protected readonly values = new Map<string, number>();

  constructor(
    options: CounterOptions,
    type: 'counter' | 'gauge',
    private readonly read?: CounterOptions['read'],
  ) {
    super(options, type);
    // An unlabelled metric has its one series from the start.
    if (options.labels === undefined || Object.keys(options.labels).length === 0) this.values.set('', 0);
  }

  samples(): string[] {
    if (this.read !== undefined) {
      const got = this.read();
      const pairs: readonly [Labels, number][] = typeof got === 'number' ? [[{}, got]] : got;
      this.values.clear();
      for (const [labels, value] of pairs) this.values.set(this.key(labels), value);
    }
    return [...this.values].map(([key, value]) => `${this.name}${key === '' ? '' : `{${key}}`} ${formatNumber(value)}`);
  }
}

export class Counter extends Scalar {
  constructor(options: CounterOptions) {
    super(options, 'counter', options.read);
  }

  inc(labels?: Labels, by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up (by ${by})`);
    const key = this.key(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
}

export class Gauge extends Scalar {
  constructor(options: GaugeOptions) {
    super(options, 'gauge', options.read);
  }

  set(value: number, labels?: Labels): void {
    this.values.set(this.key(labels), value);
  }
}

interface HistogramSeries {
  labels: string;
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Metric {
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, HistogramSeries>();

  constructor(options: HistogramOptions) {
    super(options, 'histogram');
    const b = options.buckets;
    if (b.length === 0 || b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!))) throw new Error(`${this.name}: buckets must be finite and ascending`);
    this.bounds = [...b];
  }

  observe(value: number, labels?: Labels): void {
    const key = this.key(labels);
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = { labels: key, counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const s of this.series.values()) {
      const with_ = (extra: string) => `{${s.labels === '' ? extra : `${s.labels},${extra}`}}`;
      const plain = s.labels === '' ? '' : `{${s.labels}}`;
      this.bounds.forEach((bound, i) => lines.push(`${this.name}_bucket${with_(`le="${formatNumber(bound)}"`)} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${with_('le="+Inf"')} ${s.count}`);
      lines.push(`${this.name}_sum${plain} ${formatNumber(s.sum)}`);
      lines.push(`${this.name}_count${plain} ${s.count}`);
    }
    return lines;
  }
}

export class Registry {
  private readonly metrics = new Map<string, Metric>();
  private readonly hooks: (() => void)[] = [];

  counter(options: CounterOptions): Counter {
    return this.add(new Counter(options));
  }

  gauge(options: GaugeOptions): Gauge {
    return this.add(new Gauge(options));
  }

  histogram(options: HistogramOptions): Histogram {
    return this.add(new Histogram(options));
  }

  /** Runs before each exposition: the place to set gauges from a status snapshot. */
  onCollect(hook: () => void): void {
    this.hooks.push(hook);
  }

  /** The whole registry in the text format (Content-Type: CONTENT_TYPE). */
  expose(): string {
    for (const hook of this.hooks) hook();
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`, ...m.samples());
    }
    return out.join('\n') + '\n';
  }

  private add<M extends Metric>(metric: M): M {
    const clash = [...this.metrics.values()].find((m) => familyNames(m).some((n) => familyNames(metric).includes(n)));
    if (clash !== undefined) throw new Error(`metric ${metric.name} clashes with ${clash.name}`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The sample names a metric writes, to refuse two metrics whose lines would mix. */
function familyNames(m: Metric): string[] {
  return m.type === 'histogram' ? [m.name, `${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name];
}

export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabel(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/**
 * The figures every daemon exports: its build (`sherlock_build_info`), CPU,
 * memory, open files and start time (`process_*`, as the official clients
 * name them), V8's heap and the event loop's delay since the last scrape
 * (`nodejs_*`).
 */
export function registerProcessMetrics(registry: Registry, version: string): void {
  const build = { version, node: process.version };
  registry.gauge({
    name: 'sherlock_build_info',
    help: 'The running build: sherlock and Node versions (always 1).',
    labels: { version: [build.version], node: [build.node] },
    read: () => [[build, 1]],
  });
  registry.counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    read: () => {
      const cpu = process.cpuUsage();
      return (cpu.user + cpu.system) / 1e6;
    },
  });
  registry.gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', read: () => process.memoryUsage.rss() });
  const start = Math.round(Date.now() / 1000 - process.uptime());
  registry.gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', read: () => start });
  registry.gauge({ name: 'process_open_fds', help: 'Open file descriptors.', read: openFds });
  registry.gauge({ name: 'nodejs_heap_size_used_bytes', help: "V8's heap in use, in bytes.", read: () => process.memoryUsage().heapUsed });
  registry.gauge({ name: 'nodejs_heap_size_total_bytes', help: "V8's heap allocated, in bytes.", read: () => process.memoryUsage().heapTotal });
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
  let p99 = 0;
  let max = 0;
  registry.onCollect(() => {
    p99 = seconds(delay.percentile(99));
    max = seconds(delay.max);
    delay.reset();
  });
  registry.gauge({ name: 'nodejs_eventloop_lag_p99_seconds', help: "The event loop's delay since the last scrape, 99th percentile, in seconds.", read: () => p99 });
  registry.gauge({ name: 'nodejs_eventloop_lag_max_seconds', help: "The event loop's longest delay since the last scrape, in seconds.", read: () => max });
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length - 1; // the directory being read is one
  } catch {
    return NaN; // not Linux
  }
}
