/**
 * `sherlock import archive --state DIR FILE…`: ARC and WARC files of any
 * tool made searchable (gatherer/archive-import.ts): each capture a bucket
 * pointing at its record where it lies. The shepherd takes them in as fetch
 * results at its next cycle, `sherlock index build` indexes them. Refused
 * while the gatherer runs: the bucket file has one writer.
 */

import type { Command } from 'commander';
import { isSherlockError, SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { importArchives, type ImportReport } from '../gatherer/archive-import.js';
import { documentLimits, importParseWorkers } from '../gatherer/parse-pool.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('import');

export function registerImportArchive(imp: Command): void {
  imp
    .command('archive')
    .description('ARC and WARC files (.arc, .arc.gz, .warc, .warc.gz) as fetched documents, read where they lie; again, adds only what is new')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'print the counts and problems as one JSON object')
    .argument('<file...>', 'ARC or WARC files')
    .action(
      action(async (files: string[], opts: { state?: string; json?: boolean }, cmd: Command) => {
        const state = stateDir(opts);
        const config = loadSettings(cmd.optsWithGlobals<GlobalOptions>()).config.gatherer;
        let report: ImportReport;
        try {
          report = await importArchives(state, files, {
            maxBodySize: config.max_body_size,
            typeLimits: config.type_limits,
            maxDecodedSize: config.max_decoded_size,
            parseWorkers: importParseWorkers(config),
            documentLimits: documentLimits(config),
            onProblem: (p) => log.warning('record not imported', { file: p.file, ...(p.offset === undefined ? {} : { offset: p.offset }), problem: p.message }),
          });
        } catch (err) {
          if (isSherlockError(err, 'SHERLOCK_LOCKED')) throw new SherlockError('SHERLOCK_LOCKED', `the gatherer holds the bucket file (${err.message}): stop it, import, start it again`, err.place, { cause: err });
          throw err;
        }
        log.notice('archives imported', { files: report.files, records: report.records, imported: report.imported, known: report.known, problems: report.problems.length });
        if (opts.json === true) printJson(report);
        else {
          print(`${report.records} records in ${report.files} files: ${report.imported} imported (${report.revisits} revisits), ${report.known} imported before, ${report.skipped} not captures, ${report.problems.length} damaged or unresolved`);
          for (const p of report.problems) print(`  ${p.file}${p.offset === undefined ? '' : `: offset ${p.offset}`}: ${p.message}`);
        }
        return 0;
      }),
    );
}
