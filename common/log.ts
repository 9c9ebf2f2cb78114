/**
 * Logging: one plain line per event on stderr, journald-friendly.
 *
 * Format: `<N>component: message key=value key="value with spaces"`, where N is
 * the syslog priority (sd-daemon(3): 3 err, 4 warning, 5 notice, 6 info,
 * 7 debug). journald strips the prefix and stores the priority; no timestamp is
 * written because journald adds its own. Each event is one line: newlines in
 * messages and values are escaped, so a hostile page cannot forge log lines.
 */

export const LEVELS = { err: 3, warning: 4, notice: 5, info: 6, debug: 7 } as const;
export type Level = keyof typeof LEVELS;
export type LogFields = Record<string, string | number | boolean | bigint | null | undefined>;

export interface Logger {
  readonly component: string;
  err(message: string, fields?: LogFields): void;
  warning(message: string, fields?: LogFields): void;
  notice(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
}

type Sink = (line: string) => void;

let threshold: number = LEVELS.info;
let sink: Sink = (line) => process.stderr.write(line + '\n');

/** Events less important than `level` are dropped (config key `log.level`). */
export function setLogLevel(level: Level): void {
  threshold = LEVELS[level];
}

/** Redirects every logger (tests capture lines this way); returns the previous sink. */
export function setLogSink(next: Sink): Sink {
  const previous = sink;
  sink = next;
  return previous;
}

export function logger(component: string): Logger {
  const emit = (level: Level) => (message: string, fields?: LogFields) => {
    if (LEVELS[level] > threshold) return;
    sink(formatLine(level, component, message, fields));
  };
  return {
    component,
    err: emit('err'),
    warning: emit('warning'),
    notice: emit('notice'),
    info: emit('info'),
    debug: emit('debug'),
  };
}

export function formatLine(level: Level, component: string, message: string, fields?: LogFields): string {
  let line = `<${LEVELS[level]}>${component}: ${escapeControls(message)}`;
  for (const [key, value] of Object.entries(fields ?? {})) {
    if (value === undefined) continue;
    line += ` ${key}=${formatValue(String(value))}`;
  }
  return line;
}

function formatValue(value: string): string {
  // Quote only when a reader splitting on spaces and '=' would go wrong.
  return value === '' || /[\s"=\\]|[\x00-\x1f\x7f]/.test(value) ? JSON.stringify(value) : value;
}

function escapeControls(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => (c === '\n' ? '\\n' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}
