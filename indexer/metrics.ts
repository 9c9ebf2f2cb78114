/**
 * The indexer's metrics, for the indexer daemon to register on its admin
 * listener (common/service/metrics-listener.ts): builds by result and their
 * duration, and the last version published (cards, bytes).
 */

import type { Counter, Gauge, Histogram, Registry } from '../common/service/metrics.js';
import type { BuildReport } from './build.js';

/** A build takes seconds on a small crawl and hours on a large one. */
const BUILD_SECONDS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600] as const;

export class IndexerMetrics {
  private readonly builds: Counter;
  private readonly buildSeconds: Histogram;
  private readonly cards: Gauge;
  private readonly emptyCards: Gauge;
  private readonly bytes: Gauge;

  constructor(registry: Registry) {
    this.builds = registry.counter({ name: 'sherlock_indexer_builds_total', help: 'Index builds, by result.', labels: { result: ['ok', 'failed'] } });
    this.buildSeconds = registry.histogram({ name: 'sherlock_indexer_build_duration_seconds', help: 'Time one build took, published or failed.', buckets: BUILD_SECONDS });
    this.cards = registry.gauge({ name: 'sherlock_index_documents', help: 'Cards (documents) in the version last published.' });
    this.emptyCards = registry.gauge({ name: 'sherlock_index_empty_documents', help: 'Cards with nothing to index (redirects, noindex) in the version last published.' });
    this.bytes = registry.gauge({ name: 'sherlock_index_size_bytes', help: 'Bytes of the version last published.' });
  }

  built(report: BuildReport): void {
    this.builds.inc({ result: 'ok' });
    this.buildSeconds.observe(report.seconds);
    this.cards.set(report.cards);
    this.emptyCards.set(report.emptyCards);
    this.bytes.set(report.bytes);
  }

  failed(seconds: number): void {
    this.builds.inc({ result: 'failed' });
    this.buildSeconds.observe(seconds);
  }
}
