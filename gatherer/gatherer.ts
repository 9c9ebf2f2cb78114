/**
 * The gatherer: takes URLs from its queues, fetches them politely, stores
 * what came back (store.ts) and marks the entries done. `sherlock gatherer
 * run` runs one until SIGTERM; `sherlock crawl` runs one beside the shepherd.
 *
 * One request at a time per address unless a site rule allows more
 * (scheduler.ts), robots.txt before anything else on a host (robots.ts), DNS
 * with its own limit (dns.ts), at most gatherer.max_connections requests at
 * once. Per host, a unit of work is
 * either its robots.txt or its head entry:
 *   head entry → takedown check (2308 without a request) → robots check
 *   (2304 without a request) → fetch → parse →
 *   store (ARC, bucket, done; a temporary failure queues a retry first) →
 *   the address rests max(min_delay, Crawl-delay up to max_crawl_delay).
 *
 * Site rules (common/site-rules.ts, docs/site-rules.md), looked up by the URL
 * just fetched: a rule's `delay` takes min_delay's place in that rest (so it
 * may be shorter or longer, never shorter than Crawl-delay); a host rule's
 * `connections` gives the address that many requests at once, each resting
 * after its own (connectionsOf(): only once robots.txt is read and asks no
 * Crawl-delay; the smallest of an address's hosts, scheduler.ts); its
 * `robots_disallow` paths are refused as robots.txt's own Disallow lines are
 * (2304 without a request). Reloaded with the config.
 *
 * Takedowns (common/takedowns.ts, docs/operating.md "Takedowns"): right
 * before each request for a queued URL the takedown file is looked at (one
 * stat; read again when it changed), so once `sherlock takedown add` has
 * returned no request of ours starts for what it names; those already under
 * way finish. A URL it hides is recorded taken_down (2308) without a request,
 * which the shepherd reads as "not fetched" and plans again once the takedown
 * is lifted. robots.txt requests are not checked (they fetch no document). A
 * damaged file is logged at err and its intact lines apply; one that cannot
 * be read keeps the takedowns read before.
 *
 * Restart. Opening reconciles the queues with the buckets stored after the
 * last checkpoint (store.ts): an entry whose bucket exists is marked done
 * (and its retry queued if the bucket says one was due and none is queued),
 * never fetched again. Plans are imported exactly once (plan-import.ts).
 *
 * Pause. pause() starts no new fetch (nor DNS lookup) until resume(); those
 * in flight finish and are stored. The flag lives only here: the persisted
 * one (common/gather/control.ts) is read by whoever opens the gatherer.
 *
 * Stop. stop('drain') takes no new work and lets fetches in flight finish and
 * be stored; stop('abort') also aborts them (their entries stay queued and
 * are fetched after the restart). Either way the files are synced and closed.
 *
 * Status. While it runs, the gatherer rewrites its status snapshot every
 * second (live-status.ts) and marks it stopped as it stops; its metrics
 * (metrics.ts) go into the registry it was opened with.
 *
 * A failure of our own (a full disk, a bug) stops it as abort does, and run()
 * throws it once the files are closed. A queue page that fails its check
 * quarantines only its host (takeEntry()).
 */

import { setMaxListeners } from 'node:events';
import type { ArcRecordInput, FramedArcRecord } from '../common/archive/arc-write.js';
import { BucketObject } from '../common/bucket/bucket.js';
import { md5Hex } from '../common/archive/digest.js';
import { isSherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { Registry } from '../common/service/metrics.js';
import { SiteRules } from '../common/site-rules.js';
import { TakedownFile, takedownFilePath } from '../common/takedowns.js';
import { listPlans } from '../common/gather/plan-file.js';
import { GatherQueue, queuedIn, type Host, type QueueEntry } from '../common/gather/queue-file.js';
import { queueKeyOf, queueKeyText } from '../common/gather/host-file.js';
import type { GathererConfig } from './config.js';
import { documentHeader, headerValue, responseBucket, type ParsedBody } from './document.js';
import { Resolver, resolverFor } from './dns.js';
import { Fetcher, fetcherFor, type FetchResponse } from './fetch.js';
import type { GathererStatus } from './counters.js';
import { HostRanking, LiveStatus } from './live-status.js';
import { GathererMetrics } from './metrics.js';
import { CODE, givenUp, isTemporary, type Outcome } from './outcome.js';
import { documentLimits, ParsePool, parseWorkerCount } from './parse-pool.js';
import { importPlans } from './plan-import.js';
import { decodeQueued, encodeQueued, type QueuedUrl } from './queue-entry.js';
import { interpretRobots, isExpired, policyFromBucket, robotsBucket, robotsUrl, type RobotsPolicy } from './robots.js';
import { requestRobots } from './robots-fetch.js';
import { Scheduler, type Ticket } from './scheduler.js';
import { GatherStore, parseQueueAttribute, type Unfinished } from './store.js';

const log = logger('gatherer');

/** How often the inbox is checked for new plans. */
const INBOX_POLL_MS = 1000;

/** How often the status snapshot (common/gather/status.ts) is rewritten. */
const STATUS_MS = 1000;

/** A place in a host's store order (storeTurn()). */
interface StoreTurn {
  store(step: () => Promise<void>): Promise<unknown>;
  pass(): void;
}

interface HostRuntime {
  host: Host;
  address?: string;
  resolving: boolean;
  /** After a temporary DNS failure, no new lookup before this time (ms). */
  resolveAfter: number;
  /** Entries taken (fetched or being fetched) and not yet marked done; they are the head of the queue. */
  taken: number;
  /** The host's store steps, chained (see inOrder()). */
  storing: Promise<void>;
  robots?: RobotsPolicy;
  /** The robots.txt fetch queued or in flight: one per host at a time (work()). */
  robotsFetch?: Promise<boolean>;
  robotsRedirect?: { url: string; hops: number };
  /** A queue page of the host failed its check: nothing more is taken from it until a restart. */
  quarantined?: boolean;
}

export interface RunOptions {
  /** Return once nothing is in flight and nothing is due within retry_delay and a second (see docs/gatherer.md). */
  untilIdle?: boolean;
  /** Stop after this many fetched pages (robots.txt not counted). */
  maxPages?: number;
}

export class Gatherer {
  private config: GathererConfig;
  private fetcher: Fetcher;
  private resolver: Resolver;
  private parser: ParsePool;
  private readonly scheduler = new Scheduler();
  private readonly runtime = new Map<number, HostRuntime>();
  /** Hosts without an address yet (awaiting DNS, or failed): the only ones startWork looks at for lookups. */
  private readonly unresolved = new Set<HostRuntime>();
  private readonly inFlight = new Set<Promise<void>>();
  /** The first internal failure of a unit of work, thrown by run() once everything is closed. */
  private failure: unknown;
  private readonly aborter = new AbortController();
  private stopping: 'drain' | 'abort' | undefined;
  private paused = false;
  private wake: (() => void) | undefined;
  private inboxDue = false;
  /** The plan import under way (plan-import.ts: one at a time, its fsyncs waited for off the thread). */
  private importing: Promise<void> | undefined;
  private readonly counters: GathererStatus;
  private readonly metrics: GathererMetrics;
  private readonly live: LiveStatus;
  /** The status snapshot could not be written (logged once). */
  private liveFailed = false;
  /** `state/takedowns`, looked at before each request (module comment, "Takedowns"). */
  private readonly takedowns: TakedownFile;

  private constructor(
    readonly state: string,
    config: GathererConfig,
    private readonly queue: GatherQueue,
    private readonly store: GatherStore,
    registry: Registry,
    private rules: SiteRules,
  ) {
    this.config = config;
    // Every fetch in flight listens on it: max_connections listeners is normal, not a leak.
    setMaxListeners(0, this.aborter.signal);
    this.fetcher = fetcherFor(config);
    this.resolver = resolverFor(config);
    this.parser = new ParsePool(parseWorkerCount(config), documentLimits(config));
    this.counters = { started: Date.now(), fetches: 0, bytes: 0, stored: 0, robotsFetches: 0, robotsDenied: 0, retries: 0, dnsLookups: 0, outcomes: {}, inFlight: 0, queued: 0, hosts: 0, paused: false };
    this.metrics = new GathererMetrics(registry, () => this.status());
    this.live = new LiveStatus(state);
    this.takedowns = new TakedownFile(takedownFilePath(state));
  }

  /** Opens the queues and the store, repairs what a crash left, imports waiting plans; its metrics go into `registry`. */
  static async open(state: string, config: GathererConfig, registry = new Registry(), rules = SiteRules.none): Promise<Gatherer> {
    const queue = GatherQueue.open(state);
    let store: GatherStore;
    try {
      store = await GatherStore.open(state, { arcMaxSize: config.arc_max_size });
    } catch (err) {
      queue.close();
      throw err;
    }
    const gatherer = new Gatherer(state, config, queue, store, registry, rules);
    gatherer.reconcile(store.unfinished);
    await gatherer.importInbox();
    for (const host of queue.hosts()) gatherer.track(host);
    return gatherer;
  }

  /** Takes new config values and site rules (SIGHUP); politeness and limits apply to the next requests. */
  reload(config: GathererConfig, rules = this.rules): void {
    // First what can fail (a hosts file that does not read): a refused reload changes nothing.
    const resolver = resolverFor(config);
    const old = this.fetcher;
    const was = this.config;
    if (parseWorkerCount(config) !== parseWorkerCount(was) || config.document_parse_time !== was.document_parse_time || config.document_parse_memory !== was.document_parse_memory) {
      const pool = this.parser;
      this.parser = new ParsePool(parseWorkerCount(config), documentLimits(config));
      void pool.close();
    }
    this.config = config;
    this.rules = rules;
    for (const rt of this.runtime.values()) this.scheduler.set(rt.host.slot, { connections: this.connectionsOf(rt) }, Date.now());
    this.fetcher = fetcherFor(config);
    this.counters.dnsLookups += this.resolver.lookups;
    this.resolver = resolver;
    void old.close();
    this.poke();
  }

  status(): GathererStatus {
    let queued = 0;
    const tallies = this.queue.tallies();
    for (const host of tallies) queued += queuedIn(host);
    return this.statusOf(queued, tallies.length);
  }

  private statusOf(queued: number, hosts: number): GathererStatus {
    return { ...this.counters, dnsLookups: this.counters.dnsLookups + this.resolver.lookups, outcomes: { ...this.counters.outcomes }, inFlight: this.inFlight.size, queued, hosts, paused: this.paused };
  }

  /** No new fetches until resume(); those in flight go on. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.poke();
  }

  /** Nothing in flight, no plan waiting, nothing due within retry_delay and a second, so no retry of ours (what --until-idle waits for). */
  isIdle(): boolean {
    return this.idle(Date.now());
  }

  /** A plan was just written: import it now rather than at the next poll. */
  plansWritten(): void {
    this.inboxDue = true;
    this.poke();
  }

  stop(mode: 'drain' | 'abort'): void {
    if (this.stopping !== 'abort') this.stopping = mode;
    if (mode === 'abort') this.aborter.abort();
    this.poke();
  }

  /** Runs until stop() (or idle / the page cap, as asked), then syncs and closes everything. */
  async run(options: RunOptions = {}): Promise<void> {
    let lastSync = Date.now();
    let lastInbox = Date.now();
    let lastStatus = 0;
    try {
      for (;;) {
        const now = Date.now();
        if (now - lastStatus >= STATUS_MS) {
          lastStatus = now;
          this.writeStatus(true);
        }
        if (this.importing === undefined && (this.inboxDue || now - lastInbox >= INBOX_POLL_MS)) {
          lastInbox = now;
          this.inboxDue = false;
          this.importing = this.importInbox()
            .catch((err: unknown) => {
              log.err('gatherer stopping after an internal failure', { problem: err instanceof Error ? err.message : String(err) });
              this.stop('abort');
            })
            .finally(() => {
              this.importing = undefined;
              this.poke();
            });
        }
        if (now - lastSync >= this.config.sync_interval) {
          lastSync = now;
          await this.store.sync(() => this.queue.sync());
        }
        if (options.maxPages !== undefined && this.counters.fetches >= options.maxPages && this.stopping === undefined) this.stopping = 'drain';
        if (this.stopping === undefined && !this.paused) this.startWork(now);
        if (this.stopping !== undefined && this.inFlight.size === 0) break;
        if (options.untilIdle === true && this.idle(now)) break;
        // Paused, work that is due waits for resume(), which wakes the loop.
        const due = this.paused ? undefined : this.scheduler.wakeAt();
        const waitMs = Math.max(1, Math.min(INBOX_POLL_MS, due === undefined ? INBOX_POLL_MS : due - now, this.config.sync_interval));
        await this.sleep(waitMs);
      }
    } finally {
      await Promise.allSettled([...this.inFlight, this.importing]);
      this.writeStatus(false);
      await this.store.close(() => this.queue.sync());
      this.queue.close();
      await this.fetcher.close();
      await this.parser.close();
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** The status snapshot; `running` false marks it as the last one. A failure is logged, never fatal. */
  private writeStatus(running: boolean): void {
    try {
      // One walk over the hosts: the totals, and the ranking of those with URLs queued (the snapshot lists only those).
      const ranking = new HostRanking(Date.now());
      let queued = 0;
      const tallies = this.queue.tallies();
      for (const host of tallies) {
        const n = queuedIn(host);
        if (n === 0) continue;
        queued += n;
        const nextAt = Math.max(host.backoffUntil * 1000, this.scheduler.nextAt(host.slot));
        ranking.offer(n, nextAt, () => ({ host: siteOf(host), queued: n, errors: host.errorCount, nextAt }));
      }
      this.live.write(this.statusOf(queued, tallies.length), ranking, this.store.lastArc, running);
      this.liveFailed = false;
    } catch (err) {
      if (!this.liveFailed) log.warning('status snapshot not written', { problem: err instanceof Error ? err.message : String(err) });
      this.liveFailed = true;
    }
  }

  // ------------------------------------------------------------ scheduling

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private idle(now: number): boolean {
    if (this.inFlight.size > 0 || this.importing !== undefined || listPlans(this.state).length > 0) return false;
    // Paused, queued work is waiting for resume(), not done.
    if (this.paused) for (const host of this.queue.tallies()) if (queuedIn(host) > 0) return false;
    for (const rt of this.unresolved) {
      if (rt.resolving) return false;
    }
    // A retry is due retry_delay after its failure rounded up to a whole second (queue-entry.ts, w=),
    // so up to a second later than retry_delay from now: with retry_delay under a second, most of them.
    const due = this.scheduler.wakeAt();
    if (due !== undefined && due - now <= this.config.retry_delay + 1000) return false;
    // Something ready now would have been started by startWork().
    return this.scheduler.busy === 0;
  }

  private startWork(now: number): void {
    for (const rt of this.unresolved) {
      if (!rt.resolving && rt.resolveAfter <= now && rt.host.queued > 0) this.resolve(rt);
    }
    while (this.inFlight.size < this.config.max_connections) {
      const ticket = this.scheduler.takeTicket(now);
      if (ticket === undefined) break;
      const rt = this.runtime.get(ticket.slot)!;
      const task: Promise<void> = this.work(rt, ticket)
        .catch((err: unknown) => {
          // A failure here is ours (disk, a bug), not the site's: stop rather than lose track.
          log.err('gatherer stopping after an internal failure', { host: rt.host.name, problem: err instanceof Error ? err.message : String(err) });
          this.failure ??= err;
          this.stop('abort');
        })
        .finally(() => {
          this.inFlight.delete(task);
          this.poke();
        });
      this.inFlight.add(task);
    }
  }

  /** Starts tracking a host (with queued entries or not). */
  private track(host: Host): HostRuntime {
    let rt = this.runtime.get(host.slot);
    if (rt === undefined) {
      rt = { host, resolving: false, resolveAfter: 0, taken: 0, storing: Promise.resolve() };
      this.runtime.set(host.slot, rt);
      this.unresolved.add(rt);
    }
    const fresh = this.queue.get(host);
    rt.host = fresh;
    const notBefore = fresh.backoffUntil * 1000;
    this.scheduler.set(fresh.slot, { priority: hasWork(fresh, rt) ? fresh.priority : undefined, notBefore, connections: this.connectionsOf(rt) }, Date.now());
    return rt;
  }

  private resolve(rt: HostRuntime): void {
    rt.resolving = true;
    void this.resolver.resolve(rt.host.name).then((result) => {
      rt.resolving = false;
      const now = Date.now();
      if (result.ok) {
        rt.address = result.address;
        this.unresolved.delete(rt);
        this.queue.update(rt.host, { queueKey: queueKeyOf(result.address) });
        this.scheduler.set(rt.host.slot, { key: queueKeyText(queueKeyOf(result.address)) }, now);
      } else {
        // Each queued URL of the host is recorded with the DNS error as its turn comes (a key of its own per host).
        rt.address = undefined;
        const code = result.refused ? CODE.dnsRefused : result.temporary ? CODE.dnsTemporary : CODE.dnsNoHost;
        // Still "resolving" until every queued URL is recorded: a lookup started meanwhile would record them again.
        rt.resolving = true;
        void this.failHost(rt, code, result.message).finally(() => {
          rt.resolving = false;
          this.poke();
        });
      }
      this.poke();
    });
  }

  // ------------------------------------------------------------ one unit of work

  /**
   * One unit of work for a host whose key the scheduler handed out. The key is
   * released as soon as the request is over (or at once when none is made);
   * parsing and storing go on while the key rests, and the host may already
   * fetch its next entry: `rt.taken` entries are out, stored in take order.
   */
  private async work(rt: HostRuntime, ticket: Ticket): Promise<void> {
    const slot = rt.host.slot;
    let turn: StoreTurn | undefined;
    let released = false;
    const release = (delay: number): void => {
      if (released) return;
      released = true;
      this.refresh(rt);
      this.scheduler.release(ticket, Date.now(), delay);
      this.poke();
    };
    try {
      if (rt.address === undefined) return;
      if (rt.robots === undefined) rt.robots = this.cachedRobots(rt);
      if (rt.robots === undefined || isExpired(rt.robots, Date.now())) {
        // robots.txt once and alone: no other request of the host starts before it is read.
        this.scheduler.set(slot, { connections: 1 }, Date.now());
        if (rt.robotsFetch !== undefined) {
          // Another slot of the host, taken before the limit fell to 1, already asks for it: this one makes no request.
          release(0);
          return;
        }
        const fetch = this.inOrder(rt, async () => {
          // Behind the host's requests already out; one of them may have been a robots.txt fetch that read it.
          if (rt.robots !== undefined && !isExpired(rt.robots, Date.now())) return false;
          await this.fetchRobots(rt, rt.address!);
          return true;
        });
        rt.robotsFetch = fetch;
        let requested: boolean;
        try {
          requested = await fetch;
        } finally {
          rt.robotsFetch = undefined;
        }
        release(requested ? this.restAfter(rt, robotsUrl(siteOf(rt.host))) : 0);
        return;
      }
      if (rt.robots.kind === 'disallow-all') {
        // Unreachable robots.txt: wait for it, do not hold its absence against the URLs.
        this.scheduler.set(slot, { notBefore: rt.robots.expiresAt }, Date.now());
        return;
      }
      const host = this.queue.get(rt.host);
      const entry = this.takeEntry(rt, host);
      if (entry === undefined) return;
      const queued = decodeQueued(entry.rest);
      const due = this.retryDue(queued);
      if (due > Date.now()) {
        this.scheduler.set(slot, { notBefore: due }, Date.now());
        return;
      }
      const url = `${siteOf(host)}${queued.rest}`;
      rt.taken += 1;
      // A stat per request, not a timer: the takedown applies from the moment `takedown add` returns (module comment).
      const takedowns = this.takedowns.inForce();
      if (takedowns.size > 0 && takedowns.hidesAny(url)) {
        release(0);
        await this.settleUnfetched(rt, host, entry.seq, url, 'taken_down', CODE.takenDown, 'taken down: not requested');
        return;
      }
      const verdict = rt.robots.verdict(url);
      const ruleDenied = verdict.allowed ? this.rules.robotsRefusal(url) : undefined;
      if (!verdict.allowed || ruleDenied !== undefined) {
        release(0);
        this.counters.robotsDenied += 1;
        const message = ruleDenied ?? (verdict.overBudget ? 'robots.txt too costly to match: treated as disallowed' : 'disallowed by robots.txt');
        await this.settleUnfetched(rt, host, entry.seq, url, 'robots_denied', CODE.robotsDenied, message);
        return;
      }
      const request = { url, address: rt.address, ...(queued.ifModifiedSince === undefined ? {} : { ifModifiedSince: queued.ifModifiedSince }), ...(queued.ifNoneMatch === undefined ? {} : { ifNoneMatch: queued.ifNoneMatch }) };
      // With several requests of the host at once (a site rule's connections) they may end in any order.
      turn = this.storeTurn(rt);
      const response = await this.fetcher.fetch(request, this.aborter.signal);
      if (this.aborter.signal.aborted) {
        rt.taken -= 1; // stays queued; fetched again after the restart
        return;
      }
      release(this.restAfter(rt, url));
      await turn.store(() => this.storeResponse(rt, host, entry.seq, queued, url, response));
    } finally {
      turn?.pass();
      release(0);
      this.refresh(rt);
    }
  }

  /**
   * nextEntry(), but a damaged queue page quarantines the host (logged with
   * the file and offset) instead of stopping the gatherer: the other hosts
   * go on, and the damaged host's entries stay where they are.
   */
  private takeEntry(rt: HostRuntime, host: Host): QueueEntry | undefined {
    try {
      return this.nextEntry(rt, host);
    } catch (err) {
      if (!isSherlockError(err, 'SHERLOCK_CORRUPT_QUEUE')) throw err;
      rt.quarantined = true;
      log.err('damaged queue page: host quarantined until restart', { host: host.name, file: err.place.file, offset: err.place.offset, problem: err.message });
      return undefined;
    }
  }

  /** The host's first entry not yet out. */
  private nextEntry(rt: HostRuntime, host: Host): QueueEntry | undefined {
    if (rt.taken === 0) return this.queue.take(host);
    let skip = rt.taken;
    for (const entry of this.queue.entries(host)) if (skip-- === 0) return entry;
    return undefined;
  }

  /** Runs a host's store steps one after another, so its entries are marked done in queue order. */
  private inOrder<T>(rt: HostRuntime, step: () => Promise<T>): Promise<T> {
    const run = rt.storing.then(step);
    rt.storing = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * The host's next place in store order, taken now for a step given later:
   * its entries are marked done in the order they were taken, whatever order
   * their requests end in. pass() gives up a place not used (a step already
   * given still runs).
   */
  private storeTurn(rt: HostRuntime): StoreTurn {
    let give!: (step: () => Promise<unknown>) => void;
    const given = new Promise<() => Promise<unknown>>((resolve) => (give = resolve));
    const run = this.inOrder(rt, async () => (await given)());
    return {
      store: (step) => {
        give(step);
        return run;
      },
      pass: () => give(async () => undefined),
    };
  }

  /** Records an entry settled without a request (taken down, robots denied): a bucket of its code and no body, the entry done in queue order. */
  private async settleUnfetched(rt: HostRuntime, host: Host, seq: number, url: string, outcome: Outcome, code: number, message: string): Promise<void> {
    this.count(outcome);
    const header = documentHeader({ url, time: Date.now(), code, message });
    await this.inOrder(rt, () => this.store.put({ header, body: new BucketObject(), from: { slot: host.slot, seq } }, () => this.finish(rt, host, seq)));
    this.counters.stored += 1;
  }

  /** The entry is stored: mark it done (the queue's head, as entries are stored in order). */
  private finish(rt: HostRuntime, host: Host, seq: number): void {
    this.queue.done(host, seq);
    rt.taken -= 1;
  }

  /** The rest of the address after a request for `url`: its site rule's delay or min_delay, Crawl-delay when longer. */
  private restAfter(rt: HostRuntime, url: string): number {
    const crawlDelay = Math.min(rt.robots?.crawlDelayMs ?? 0, this.config.max_crawl_delay);
    return Math.max(this.rules.setting(url, 'delay') ?? this.config.min_delay, crawlDelay);
  }

  /**
   * Requests at once the host may have to its address: its host or domain
   * rule's `connections` once robots.txt is read and current, 1 before and
   * when robots.txt asks a Crawl-delay (a pace several slots would multiply).
   */
  private connectionsOf(rt: HostRuntime): number {
    const robots = rt.robots;
    if (robots === undefined || isExpired(robots, Date.now()) || (robots.crawlDelayMs ?? 0) > 0) return 1;
    return this.rules.hostSetting(rt.host.name, 'connections') ?? 1;
  }

  private refresh(rt: HostRuntime): void {
    const host = this.queue.get(rt.host);
    rt.host = host;
    this.scheduler.set(host.slot, { priority: hasWork(host, rt) ? host.priority : undefined, connections: this.connectionsOf(rt) }, Date.now());
  }

  private async storeResponse(rt: HostRuntime, host: Host, seq: number, queued: QueuedUrl, url: string, response: FetchResponse): Promise<void> {
    this.counters.fetches += 1;
    this.counters.bytes += response.body.length;
    this.metrics.fetched(response.elapsedMs);
    const retry = isTemporary(response.code) && queued.retries < this.config.max_retries;
    const code = retry ? response.code : givenUp(response.code);
    const message = code === response.code ? response.message : `gave up after ${queued.retries + 1} tries: ${response.message}`;
    const { header, body, arc, outcome } = await this.describe({ ...response, code, message }, url);
    // As recorded: parsing can make an ok fetch unsupported_type, unparseable or too_large.
    this.count(outcome);
    await this.store.put({ header, body, ...(arc === undefined ? {} : { arc }), from: { slot: host.slot, seq, ...(retry ? { retry: true } : {}) } }, () => {
      if (retry) this.queueRetry(host, seq, queued, response.retryAfter);
      this.finish(rt, host, seq);
      this.noteHostResult(host, isTemporary(code) || response.outcome === 'http_5xx');
    });
    this.counters.stored += 1;
    if (retry) this.counters.retries += 1;
  }

  /**
   * Header and body attributes of a response and its ARC record. HTML and
   * text are parsed, and the record framed, by a parse worker (parse-worker.ts);
   * should the worker itself fail, the response is stored unparsed and its
   * record framed by the store, as before parsing existed.
   */
  private async describe(response: FetchResponse, url: string): Promise<{ header: BucketObject; body: BucketObject | Buffer; outcome: Outcome; arc?: ArcRecordInput | FramedArcRecord }> {
    let arc: ArcRecordInput | FramedArcRecord | undefined;
    let md5: string | undefined;
    let parsed: ParsedBody | undefined;
    if (response.arcContent !== undefined) {
      arc = { url, ip: response.address, date: response.startedAt, content: response.arcContent, ...mimeOf(response) };
      const document = response.outcome === 'ok' || response.outcome === 'too_large';
      try {
        const prepared = await this.parser.prepare({
          arc,
          framing: this.store.arcFraming,
          body: response.body,
          ...(document ? { parse: { url: response.url, headers: response.headers, maxDecodedSize: this.config.max_decoded_size } } : {}),
        });
        arc = prepared.arc;
        md5 = prepared.md5;
        if (prepared.problem !== undefined) log.info('body not parsed', { url: response.url, problem: prepared.problem });
        parsed = prepared.parsed;
      } catch (err) {
        log.info('body not parsed', { url: response.url, problem: err instanceof Error ? err.message : String(err) });
      }
    }
    return { ...responseBucket(response, md5 ?? md5Hex(response.body), parsed), ...(arc === undefined ? {} : { arc }) };
  }

  /**
   * Queues the retry of a temporary failure, due after retry_delay or the
   * server's Retry-After if longer, up to max_retry_after: the retry waits at
   * the head of its host's queue, so an unbounded one would hold every URL
   * of the host behind it for as long as the server asks (the year 33715 for
   * `Retry-After: 999999999999`).
   */
  private queueRetry(host: Host, seq: number, queued: QueuedUrl, retryAfter: number | undefined): void {
    const wait = Math.max(this.config.retry_delay, Math.min((retryAfter ?? 0) * 1000, this.config.max_retry_after));
    const retry: QueuedUrl = { ...queued, retries: queued.retries + 1, notBefore: Math.ceil((Date.now() + wait) / 1000), retryOf: seq };
    this.queue.push(host, encodeQueued(retry), this.queue.get(host).priority);
  }

  /**
   * When a queue entry may be fetched (ms): now for a first try; a retry's
   * not-before time, unless it lies further off than queueRetry() sets now
   * (queued before max_retry_after was lowered, or before it existed), when
   * it is due at once rather than shutting its host's queue that long.
   */
  private retryDue(queued: QueuedUrl): number {
    if (queued.notBefore === undefined) return 0;
    const latest = Date.now() + Math.max(this.config.retry_delay, this.config.max_retry_after) + 1000;
    return queued.notBefore * 1000 > latest ? 0 : queued.notBefore * 1000;
  }

  /** Consecutive errors on a host: after error_backoff_after of them the host waits error_backoff. */
  private noteHostResult(host: Host, failed: boolean): void {
    const current = this.queue.get(host);
    if (!failed) {
      if (current.errorCount !== 0) this.queue.update(host, { errorCount: 0 });
      return;
    }
    const errorCount = current.errorCount + 1;
    if (errorCount >= this.config.error_backoff_after) {
      const until = Math.ceil((Date.now() + this.config.error_backoff) / 1000);
      this.queue.update(host, { errorCount, backoffUntil: until });
      this.scheduler.set(host.slot, { notBefore: until * 1000 }, Date.now());
      log.notice('host keeps failing; backing off', { host: host.name, errors: errorCount, until: new Date(until * 1000).toISOString() });
    } else {
      this.queue.update(host, { errorCount });
    }
  }

  // ------------------------------------------------------------ robots.txt

  private cachedRobots(rt: HostRuntime): RobotsPolicy | undefined {
    const oid = rt.host.robotsOid;
    if (oid === 0) return undefined;
    try {
      const bucket = this.store.buckets.decode(this.store.buckets.read(oid));
      return policyFromBucket(bucket, this.config.user_agent);
    } catch (err) {
      log.info('cached robots.txt unusable; fetching it again', { host: rt.host.name, problem: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  }

  private async fetchRobots(rt: HostRuntime, address: string): Promise<void> {
    const redirect = rt.robotsRedirect;
    const url = redirect?.url ?? robotsUrl(siteOf(rt.host));
    const { response, fetched } = await requestRobots(url, { host: rt.host.name, address }, this.resolver, this.fetcher, this.aborter.signal);
    if (this.aborter.signal.aborted) return;
    this.counters.robotsFetches += 1;
    this.metrics.robotsFetched(response.outcome);
    const now = Date.now();
    const options = { url, userAgent: this.config.user_agent, now, expireMs: this.config.robots_expire, errorRetryMs: this.config.error_backoff };
    const decision = interpretRobots(response, options, redirect?.hops ?? 0);
    if (decision.kind === 'redirect') {
      rt.robotsRedirect = { url: decision.location, hops: (redirect?.hops ?? 0) + 1 };
      return;
    }
    rt.robotsRedirect = undefined;
    const policy = decision.policy;
    const bucket = robotsBucket(url, policy, { ...(fetched?.status === undefined ? {} : { status: fetched.status }), code: response.code, message: response.message });
    const arc = fetched?.arcContent === undefined ? undefined : { url, ip: fetched.address, date: fetched.startedAt, content: fetched.arcContent, ...mimeOf(fetched) };
    await this.store.put({ ...bucket, ...(arc === undefined ? {} : { arc }), deflate: false }, (stored) => {
      this.queue.update(rt.host, { robotsOid: stored.oid, robotsTime: Math.floor(now / 1000) });
    });
    rt.robots = policy;
    if (policy.kind === 'disallow-all') {
      // RFC 9309 §2.3.1.4: unreachable means disallow all; the host waits and asks again later.
      this.scheduler.set(rt.host.slot, { notBefore: policy.expiresAt }, now);
      log.notice('robots.txt unreachable; host shut until it is fetched again', { host: rt.host.name, until: new Date(policy.expiresAt).toISOString(), problem: response.message });
    }
  }

  // ------------------------------------------------------------ failures without a request

  /** Records every queued URL of a host that cannot be reached by name (DNS failed or refused). */
  private async failHost(rt: HostRuntime, code: number, message: string): Promise<void> {
    const host = this.queue.get(rt.host);
    if (isTemporary(code)) {
      rt.resolveAfter = Date.now() + this.config.retry_delay;
      log.notice('DNS lookup failed; trying again later', { host: host.name, problem: message });
      return;
    }
    for (let entry = this.queue.take(host); entry !== undefined; entry = this.queue.take(host)) {
      const { seq } = entry;
      const url = `${siteOf(host)}${decodeQueued(entry.rest).rest}`;
      this.count('dns');
      await this.store.put({ header: documentHeader({ url, time: Date.now(), code, message }), body: new BucketObject(), from: { slot: host.slot, seq } }, () =>
        this.queue.done(host, seq),
      );
    }
    this.refresh(rt);
  }

  // ------------------------------------------------------------ inbox and restart

  private async importInbox(): Promise<void> {
    const report = await importPlans(this.state, this.queue);
    if (report.plans === 0) return;
    log.info('imported plans', { plans: report.plans, urls: report.urls, refused: report.refused });
    for (const host of report.hosts) this.track(host);
  }

  /** See the module comment, "Restart". */
  private reconcile(unfinished: readonly Unfinished[]): void {
    const bySlot = new Map<number, Map<number, Unfinished>>();
    for (const u of unfinished) {
      let seqs = bySlot.get(u.slot);
      if (seqs === undefined) bySlot.set(u.slot, (seqs = new Map()));
      seqs.set(u.seq, u);
    }
    let finished = 0;
    for (const host of this.queue.hosts()) {
      const seqs = bySlot.get(host.slot);
      if (seqs === undefined) continue;
      for (let entry = this.queue.take(host); entry !== undefined && seqs.has(entry.seq); entry = this.queue.take(host)) {
        const ref = parseQueueAttribute(seqs.get(entry.seq)!.header.string('q'));
        if (ref?.retry === true && ![...this.queue.entries(host)].some((e) => decodeQueued(e.rest).retryOf === entry!.seq)) {
          this.queueRetry(host, entry.seq, decodeQueued(entry.rest), undefined);
        }
        this.queue.done(host, entry.seq);
        finished += 1;
      }
    }
    if (finished > 0) {
      this.queue.sync();
      log.notice('queue entries already stored before the restart marked done', { entries: finished });
    }
  }

  private count(outcome: Outcome): void {
    this.counters.outcomes[outcome] = (this.counters.outcomes[outcome] ?? 0) + 1;
  }
}

function siteOf(host: Pick<Host, 'scheme' | 'port' | 'name'>): string {
  const defaultPort = host.scheme === 'https' ? 443 : 80;
  return `${host.scheme}://${host.name}${host.port === defaultPort ? '' : `:${host.port}`}`;
}

function mimeOf(response: FetchResponse): { contentType?: string } {
  const value = headerValue(response.headers, 'content-type');
  return value === undefined ? {} : { contentType: value };
}

/**
 * Entries of one host fetched and not yet stored, at most: parsing and
 * storing lag behind fetching at times, and one fast host must neither fill
 * memory with bodies nor take every connection slot (each unstored entry
 * holds one of max_connections).
 */
export const MAX_UNSTORED_PER_HOST = 4;

/** Whether a host has an entry to fetch now: some not yet out, and room for one more. */
function hasWork(host: Host, rt: HostRuntime): boolean {
  return rt.quarantined !== true && host.queued > rt.taken && rt.taken < MAX_UNSTORED_PER_HOST;
}

