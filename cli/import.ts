/**
 * `sherlock import`: other tools' crawls into sherlock's files. `nutch` (a
 * crawldb into the URL database, import-nutch.ts) and `archive` (ARC and WARC
 * files into the bucket file, import-archive.ts).
 */

import type { Command } from 'commander';
import { registerImportArchive } from './import-archive.js';
import { registerImportNutch } from './import-nutch.js';

export function registerImport(program: Command): void {
  const imp = program.command('import').description('bring another crawler’s URL database or web archives into sherlock');
  registerImportNutch(imp);
  registerImportArchive(imp);
}
