/**
 * `sherlock crawl pause|resume|status --state DIR [--json]`: pausing the
 * gathering of the state, whichever process gathers (`gatherer run`,
 * `sherlock crawl`), through the pause flag and the control socket
 * (common/gather/control.ts). pause and resume set or clear the flag first, so they
 * hold across restarts and work with no gatherer running (it starts
 * paused), then tell the running gatherer, if any. While paused, fetches in
 * flight finish and no new one starts; the shepherd goes on merging and
 * planning.
 */

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { askControl, readPauseFlag, writePauseFlag, type ControlAnswer, type ControlCommand } from '../common/gather/control.js';
import { SherlockError } from '../common/errors.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';

interface ControlOptions {
  state?: string;
  json?: boolean;
}

export function registerCrawlControl(crawl: Command): void {
  for (const [name, description] of [
    ['pause', 'pause gathering (fetches in flight finish, no new ones start); holds across restarts'],
    ['resume', 'resume gathering'],
    ['status', 'whether gathering is paused, and the running gatherer\'s counters'],
  ] as const) {
    crawl
      .command(name)
      .description(description)
      .option('--state <dir>', STATE_HELP)
      .option('--json', 'print one JSON object')
      .action(action((_opts: ControlOptions, cmd: Command) => control(name, cmd.optsWithGlobals<ControlOptions>())));
  }
}

async function control(command: ControlCommand, opts: ControlOptions): Promise<void> {
  const state = stateDir(opts);
  if (!existsSync(state)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such state directory', { file: state });
  if (command !== 'status') {
    mkdirSync(join(state, 'gather'), { recursive: true });
    writePauseFlag(state, command === 'pause');
  }
  const answer = await askControl(state, command);
  if (answer !== undefined && !answer.ok) throw new SherlockError('SHERLOCK_IO', `the gatherer refused ${command}: ${answer.error}`);
  const since = readPauseFlag(state);
  const report = { paused: since !== undefined, ...(since === undefined ? {} : { since }), running: answer !== undefined, ...(answer === undefined ? {} : { gatherer: answer }) };
  if (opts.json === true) printJson(report);
  else print(describe(report.paused, since, answer));
}

function describe(paused: boolean, since: string | undefined, answer: ControlAnswer | undefined): string {
  const state = paused ? `paused since ${since}` : 'not paused';
  if (answer === undefined || !answer.ok) return `${state}; no gatherer running${paused ? ' (it will start paused)' : ''}`;
  const n = (field: string) => Number(answer[field] ?? 0);
  return `${state}; gatherer running: ${n('inFlight')} fetches in flight, ${n('fetches')} fetched, ${n('queued')} URLs queued`;
}
