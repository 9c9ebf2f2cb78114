/**
 * The crawlee peer's process: one CheerioCrawler over the benchmark site.
 *
 *   node dist/bench/peers/crawlee-crawl.js SEEDS_FILE MAX_REQUESTS MIN_CONCURRENCY MAX_CONCURRENCY
 *
 * Storage is in memory (CRAWLEE_PERSIST_STORAGE=false, set by the harness).
 * Prints {"handled":N,"failed":N} when done.
 */

import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';
import { readSeeds } from './seeds.js';

const [seedsFile, maxRequests, minConcurrency, maxConcurrency] = process.argv.slice(2);
if (seedsFile === undefined) {
  process.stderr.write('usage: crawlee-crawl SEEDS_FILE MAX_REQUESTS MIN_CONCURRENCY MAX_CONCURRENCY\n');
  process.exit(2);
}
const seeds = readSeeds(seedsFile);
log.setLevel(log.LEVELS.WARNING);

let handled = 0;
let failed = 0;
const crawler = new CheerioCrawler(
  {
    respectRobotsTxtFile: true,
    maxRequestRetries: 1,
    maxRequestsPerCrawl: Number(maxRequests ?? '100000'),
    minConcurrency: Number(minConcurrency ?? '1'),
    maxConcurrency: Number(maxConcurrency ?? '200'),
    requestHandlerTimeoutSecs: 60,
    async requestHandler({ enqueueLinks }) {
      handled++;
      await enqueueLinks({ strategy: 'same-hostname' });
    },
    failedRequestHandler() {
      failed++;
    },
  },
  new Configuration({ persistStorage: false, purgeOnStart: true }),
);
await crawler.run(seeds);
process.stdout.write(JSON.stringify({ handled, failed }) + '\n');
