/**
 * `sherlock takedown add|remove|list`: the operator's takedowns, kept in
 * `state/takedowns` (common/takedowns.ts). add and remove append one line
 * and log one; the daemons follow the file on their own (the searcher
 * within a second), so nothing needs to be running or told.
 */

import type { Command } from 'commander';
import { SherlockError, isSherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { TakedownSet, appendTakedown, readTakedowns, readTakedownsStrict, takedownFilePath, takedownTarget, type TakedownKind } from '../common/takedowns.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';

const log = logger('takedown');

interface KindOptions {
  state?: string;
  prefix?: boolean;
  site?: boolean;
}

export function registerTakedown(program: Command): void {
  const group = program.command('takedown').description('hide URLs, URL prefixes or whole sites from search, the index and the crawl');
  group
    .command('add')
    .description('take down a URL (or, with --prefix, every URL starting so; with --site, a host and the hosts below it)')
    .argument('<target>', 'a URL, a URL prefix or a host name')
    .requiredOption('--reason <text>', 'why, kept in the takedown file')
    .option('--prefix', 'the target is a URL prefix')
    .option('--site', 'the target is a site (host name)')
    .option('--state <dir>', STATE_HELP)
    .action(action(async (target: string, opts: KindOptions & { reason: string }) => change('add', target, opts)));
  group
    .command('remove')
    .description('lift a takedown (named as it was added)')
    .argument('<target>', 'a URL, a URL prefix or a host name')
    .option('--prefix', 'the target is a URL prefix')
    .option('--site', 'the target is a site (host name)')
    .option('--state <dir>', STATE_HELP)
    .action(action(async (target: string, opts: KindOptions) => change('remove', target, opts)));
  group
    .command('list')
    .description('the takedowns in force, oldest first')
    .option('--json', 'one JSON object per takedown')
    .option('--state <dir>', STATE_HELP)
    .action(
      action((opts: { state?: string; json?: boolean }) => {
        const set = TakedownSet.of(readTakedownsStrict(takedownFilePath(stateDir(opts))));
        for (const t of set.entries) {
          const shown = opts.json === true ? printJson({ kind: t.kind, target: t.target, reason: t.reason, time: t.time }) : print(`${t.kind}\t${t.target}\t${t.time}\t${t.reason ?? ''}`);
          if (!shown) break;
        }
        return 0;
      }),
    );
}

/** Appends an add or a remove; a remove of what is not in force is refused (exit 1), an add of what is is appended again with its new reason. */
async function change(op: 'add' | 'remove', input: string, opts: KindOptions & { reason?: string }): Promise<number> {
  if (opts.prefix === true && opts.site === true) throw new SherlockError('SHERLOCK_USAGE', '--prefix and --site exclude each other');
  const kind: TakedownKind = opts.prefix === true ? 'prefix' : opts.site === true ? 'site' : 'url';
  let target: string;
  try {
    target = takedownTarget(kind, input);
  } catch (err) {
    if (!isSherlockError(err, 'SHERLOCK_BAD_URL')) throw err;
    throw new SherlockError('SHERLOCK_USAGE', `not a ${kind === 'url' ? 'URL' : kind === 'prefix' ? 'URL prefix' : 'site'}: ${JSON.stringify(input)}: ${err.message}`);
  }
  const file = takedownFilePath(stateDir(opts));
  const read = readTakedowns(file);
  // Takedowns are urgent: damage further up is reported, and the change is still made.
  for (const d of read.damage) log.err('damaged takedown line ignored', { file, line: d.line, offset: d.offset, problem: d.problem });
  if (op === 'remove' && !TakedownSet.of(read.changes).entries.some((t) => t.kind === kind && t.target === target)) {
    throw new SherlockError('SHERLOCK_NOT_FOUND', `no ${kind} takedown of ${target} in force`, { file });
  }
  const time = new Date().toISOString();
  await appendTakedown(file, op === 'add' ? { op, kind, target, reason: opts.reason!, time } : { op, kind, target, time });
  log.notice(op === 'add' ? 'takedown added' : 'takedown removed', { kind, target, ...(op === 'add' ? { reason: opts.reason } : {}) });
  return 0;
}
