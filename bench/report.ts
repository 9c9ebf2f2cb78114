/**
 * The benchmark report: one table per part (gathering, URL database, indexing,
 * searching, exports). Each table has the peers' rows, sherlock's row, and one
 * ratio column per headline metric: sherlock's figure divided by the peer's,
 * with the better direction in the header. A row that has no measurement says
 * why ("not built yet", "failed: …", "unavailable: …"); no figure is ever made
 * up. Pure functions: the harness fills the tables, this file renders them.
 */

export type Format = 'int' | 'dec1' | 'dec2' | 'dec3' | 'ms' | 'mib' | 's';
export type Better = 'higher' | 'lower';

export interface Column {
  readonly key: string;
  readonly label: string;
  readonly format: Format;
}

export interface RatioSpec {
  readonly key: string;
  /** Short name of the metric in the ratio header. */
  readonly label: string;
  readonly better: Better;
}

export type RowStatus = 'ok' | 'not-built' | 'failed' | 'unavailable';

export interface Row {
  readonly name: string;
  readonly status: RowStatus;
  /** Medians over the runs (status ok only). */
  readonly values?: Readonly<Record<string, number>>;
  /** Why there is no figure (failed / unavailable), or a remark. */
  readonly message?: string;
}

export interface Table {
  readonly id: string;
  readonly title: string;
  readonly subtitle: string;
  readonly columns: readonly Column[];
  readonly ratios: readonly RatioSpec[];
  readonly peers: readonly Row[];
  readonly sherlock: Row;
  /** The sherlock row's label when it is not "sherlock" (a table of sherlock alone in several configurations). */
  readonly sherlockLabel?: string;
  readonly notes: readonly string[];
}

export const NOT_BUILT = 'not built yet';

/** sherlock ÷ peer, or undefined when either side has no figure or the peer's is zero. */
export function ratio(sherlock: number | undefined, peer: number | undefined): number | undefined {
  if (sherlock === undefined || peer === undefined) return undefined;
  if (!Number.isFinite(sherlock) || !Number.isFinite(peer) || peer === 0) return undefined;
  return sherlock / peer;
}

/** True when a ratio means sherlock is ahead on that metric. */
export function ahead(r: number, better: Better): boolean {
  return better === 'higher' ? r > 1 : r < 1;
}

function groupThousands(s: string): string {
  const [int, frac] = s.split('.');
  const neg = int!.startsWith('-');
  const digits = neg ? int!.slice(1) : int!;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (neg ? '-' : '') + grouped + (frac === undefined ? '' : '.' + frac);
}

export function formatValue(v: number, format: Format): string {
  if (!Number.isFinite(v)) return '—';
  switch (format) {
    case 'int':
      return groupThousands(Math.round(v).toFixed(0));
    case 'dec1':
      return groupThousands(v.toFixed(1));
    case 'dec2':
      return groupThousands(v.toFixed(2));
    case 'dec3':
      return groupThousands(v.toFixed(3));
    case 's':
      return v < 10 ? v.toFixed(2) : groupThousands(v.toFixed(1));
    case 'ms':
      return v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : groupThousands(v.toFixed(0));
    case 'mib':
      return groupThousands((v / 1048576).toFixed(1));
  }
}

export function formatRatio(r: number | undefined): string {
  if (r === undefined) return '—';
  return (r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)) + '×';
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function rowCells(row: Row, table: Table): string[] {
  if (row.status !== 'ok' || row.values === undefined) {
    const why = row.status === 'not-built' ? NOT_BUILT : `${row.status}${row.message === undefined ? '' : ': ' + row.message}`;
    return [escapeCell(why), ...table.columns.slice(1).map(() => '')];
  }
  const values = row.values;
  return table.columns.map((c) => {
    const v = values[c.key];
    return v === undefined ? '—' : formatValue(v, c.format);
  });
}

/** One table as GitHub markdown. */
export function renderTable(table: Table): string {
  const ratioHeaders = table.ratios.map((r) => `sherlock ÷ peer, ${r.label} (${r.better} is better)`);
  const header = ['', ...table.columns.map((c) => c.label), ...ratioHeaders];
  const align = ['---', ...table.columns.map(() => '---:'), ...table.ratios.map(() => '---:')];
  const lines = [`### ${table.title}`, '', table.subtitle, '', `| ${header.join(' | ')} |`, `| ${align.join(' | ')} |`];
  const sherlockValues = table.sherlock.status === 'ok' ? table.sherlock.values : undefined;
  for (const peer of table.peers) {
    const ratios = table.ratios.map((r) => {
      if (table.sherlock.status === 'not-built') return NOT_BUILT;
      return formatRatio(ratio(sherlockValues?.[r.key], peer.status === 'ok' ? peer.values?.[r.key] : undefined));
    });
    lines.push(`| ${[escapeCell(peer.name), ...rowCells(peer, table), ...ratios].join(' | ')} |`);
  }
  lines.push(`| ${[`**${escapeCell(table.sherlockLabel ?? 'sherlock')}**`, ...rowCells(table.sherlock, table), ...table.ratios.map(() => '')].join(' | ')} |`);
  if (table.notes.length > 0) lines.push('', ...table.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}

export interface ReportHead {
  readonly command: string;
  readonly machine: string;
  readonly corpus: string;
  readonly started: string;
  readonly durationS: number;
}

export function renderReport(head: ReportHead, tables: readonly Table[], footnotes: readonly string[]): string {
  const parts = [
    '## sherlock benchmark',
    '',
    `Command: \`${head.command}\``,
    `Machine: ${head.machine}`,
    `Corpus: ${head.corpus}`,
    `Started ${head.started}, took ${formatValue(head.durationS, 's')} s.`,
    '',
    ...tables.flatMap((t) => [renderTable(t), '']),
  ];
  if (footnotes.length > 0) parts.push('#### How the peers ran', '', ...footnotes.map((f) => `- ${f}`), '');
  return parts.join('\n');
}
