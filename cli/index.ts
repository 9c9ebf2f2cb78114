/**
 * `sherlock index build --state DIR [--keep-work] [--json]`: one index
 * version from the buckets, published atomically (indexer/build.ts); progress
 * on stderr when it is a terminal, a summary on stdout at the end (cards,
 * words, postings, bytes, seconds per stage), one JSON object with --json.
 *
 * `sherlock index verify --state DIR [--all] [--json]`: the version `current`
 * names (every published version with --all) checked file by file against its
 * Manifest (indexer/verify.ts): each problem (`FILE: offset N: message`), then
 * one summary line per version. Exit 1 on any problem, or with no current
 * version.
 *
 * `sherlock index dump FILE [--json]`: any file of an index version, one
 * record per line (indexer/dump.ts says the lines of each format) or one JSON
 * object per record. Damage stops the dump with exit 1 and a message naming
 * the file and offset.
 */

import type { Command } from 'commander';
import { buildIndex, STAGES, type BuildReport, type Stage } from '../indexer/build.js';
import { dumpIndexFile } from '../indexer/dump.js';
import { verifyIndex } from '../indexer/verify.js';
import { action, print, printJson, STATE_HELP, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

export function registerIndex(program: Command): void {
  const index = program.command('index').description('index versions: build one, look into their files');

  index
    .command('build')
    .description('build an index version from the buckets and publish it as state/index/current')
    .option('--state <dir>', STATE_HELP)
    .option('--keep-work', "keep the stages' working files (Postings, LexRaw, …) in the version")
    .option('--json', 'print the summary as one JSON object')
    .action(action((opts: BuildOptions, cmd: Command) => build(opts, cmd.optsWithGlobals<GlobalOptions>())));

  index
    .command('verify')
    .description("check the version `current` names (or every version) file by file against its Manifest; exit 1 on any problem")
    .option('--state <dir>', STATE_HELP)
    .option('--all', 'every published version, not only the current one')
    .option('--json', 'one JSON object per problem, then one per version')
    .action(action((opts: { state?: string; all?: boolean; json?: boolean }) => verify(stateDir(opts), opts.all === true, opts.json === true)));

  index
    .command('dump')
    .description('print a file of an index version (CardInfo, Cards, Lexicon, WordIndex, …), one record per line')
    .argument('<file>', 'index file')
    .option('--json', 'one JSON object per record')
    .action(
      action((file: string, opts: { json?: boolean }) => {
        for (const record of dumpIndexFile(file)) {
          if (!(opts.json === true ? printJson(record.json) : print(record.line))) break;
        }
      }),
    );
}

/** `index verify`: each problem, then a summary line per version; exit 1 on any problem. */
function verify(state: string, all: boolean, json: boolean): number {
  let problems = 0;
  for (const { version, current, files, problems: found } of verifyIndex(state, all)) {
    for (const problem of found) {
      if (json) printJson({ version, file: problem.place.file, offset: problem.place.offset, code: problem.code, message: problem.message });
      else print(problem.describe());
    }
    if (json) printJson({ version, current, files, problems: found.length, ok: found.length === 0 });
    else print(`${version}${current ? ' (current)' : ''}: ${files} files, ${found.length === 0 ? 'ok' : `${found.length} problems`}`);
    problems += found.length;
  }
  return problems === 0 ? 0 : 1;
}

interface BuildOptions {
  state?: string;
  keepWork?: boolean;
  json?: boolean;
}

async function build(opts: BuildOptions, globals: GlobalOptions): Promise<number> {
  const state = stateDir(opts);
  const { config, rules } = loadSettings(globals);
  const tty = process.stderr.isTTY;
  let shown = 0;
  const onProgress = (stage: Stage, done: number, total: number): void => {
    const now = Date.now();
    if (now - shown < 100) return;
    shown = now;
    process.stderr.write(`\r${stage} ${done}${total > done ? `/${total}` : ''}\x1b[K`);
  };
  const report = await buildIndex({ state, config: config.indexer, rules, keepWork: opts.keepWork === true, ...(tty ? { onProgress } : {}) });
  if (tty) process.stderr.write('\r\x1b[K');
  if (opts.json === true) printJson(report);
  else print(describeBuild(report));
  return 0;
}

export function describeBuild(report: BuildReport): string {
  const stages = STAGES.map((stage) => `${stage} ${(report.stages.find((s) => s.stage === stage)?.seconds ?? 0).toFixed(2)}`).join(', ');
  return (
    `index ${report.version}: ${report.cards} cards (${report.images} images, ${report.emptyCards} empty, ${report.duplicates} duplicates; ${report.takenDown} taken down left out), ${report.anchors} anchor texts, ${report.words} words, ${report.postings} postings, ` +
    `${report.strings} strings, ${(report.bytes / 1e6).toFixed(1)} MB in ${report.seconds.toFixed(2)} s (${stages} s), peak RSS ${Math.round(report.maxRss / 1048576)} MiB`
  );
}
