/**
 * Politeness: which host may be fetched from next. After the original
 * gatherer (sherlock-original §2 "Politeness"):
 *   - time is kept per queue key (the host's IP address): at most one request
 *     to a key at a time, and after it the key rests for a delay the caller
 *     gives (min_delay, or a longer robots.txt Crawl-delay);
 *   - unless every host on the key allows more `connections` (a site rule,
 *     given by the caller; 1 when unset): then the key has that many slots,
 *     the smallest of its hosts', each taking one request at a time and
 *     resting the delay after it, so N slots make N requests per delay plus
 *     response time. One host may have several of its key's slots;
 *   - a host may also be held back on its own (back-off after errors, a
 *     retry not yet due, robots.txt unreachable) with `notBefore`;
 *   - among keys ready now, the one whose best host is in the lowest priority
 *     band (plan-file.ts PRIORITY_BAND: refresh before new) goes first, and
 *     within a band the one whose best host was served least recently (then
 *     the key served least recently); within a key, the same rule picks the
 *     host. So hosts take turns across the whole crawl, not addresses: when
 *     connections or the processor run short, an address shared by twenty
 *     hosts gets twenty turns to a lone host's one (its rest allowing), and
 *     none of its hosts waits twenty times longer than a lone one. A rank within a band orders a host's own queue, never
 *     one host before another: ranks restart with every plan, and a host
 *     whose URLs keep ranking first would take every turn of its address
 *     (and, when connections run short, of the crawl) while the others wait.
 * The global cap on connections is the caller's: it simply stops calling
 * take(). The scheduler is pure bookkeeping with the time passed in, so the
 * gatherer and the tests drive it with a real or a fake clock alike.
 *
 * A request is handed out as a ticket (takeTicket()) naming its host and
 * key; release() takes the ticket back, so with several requests of a host
 * out, ending in any order, each frees the key it went to even when the host
 * moved address between them.
 *
 * Cost: take() and release() are O(log keys) plus the hosts of one key
 * (usually one; virtual hosting puts many on one address).
 */

import { PRIORITY_BAND } from '../common/gather/plan-file.js';

export interface HostWork {
  /** Queue key; undefined while the host awaits DNS (such hosts are never handed out). */
  key?: string;
  /** Head priority of its queue; undefined when it has nothing to do. */
  priority?: number;
  /** Not before this time (ms). */
  notBefore?: number;
  /** Requests at once its key may have for it (1 unless given). */
  connections?: number;
}

/** One request handed out by take(), given back to release(): its host and the key it went to. */
export interface Ticket {
  readonly slot: number;
  readonly key: string;
}

interface HostState {
  slot: number;
  key: string | undefined;
  /** The keys its requests went to, oldest first, while they are out (the host may have moved since). */
  out: KeyState[];
  /** The band of its head priority; undefined when it has nothing to do. */
  band: number | undefined;
  notBefore: number;
  served: number;
  connections: number;
}

interface KeyState {
  id: string;
  hosts: Set<HostState>;
  /** Requests out. */
  out: number;
  /** When each slot resting after its request may take the next (ms, unordered). */
  resting: number[];
  /** When a slot is next free by rest (ms; 0 when one is free now or all wait for a release). */
  nextAt: number;
  served: number;
  /** Bumped whenever the key is re-filed; heap entries with an older one are stale. */
  version: number;
}

interface ReadyEntry {
  key: KeyState;
  version: number;
  /** Its best host's band and last turn, then the key's own last turn. */
  band: number;
  served: number;
  keyServed: number;
}

interface TimerEntry {
  key: KeyState;
  at: number;
}

/** A binary min-heap. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(items[l]!, items[m]!)) m = l;
        if (r < items.length && this.less(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: { band: number; served: number }, b: { band: number; served: number }): boolean {
  return a.band < b.band || (a.band === b.band && a.served < b.served);
}

export class Scheduler {
  private readonly hosts = new Map<number, HostState>();
  private readonly keys = new Map<string, KeyState>();
  private readonly ready = new Heap<ReadyEntry>((a, b) => before(a, b) || (a.band === b.band && a.served === b.served && a.keyServed < b.keyServed));
  private readonly timers = new Heap<TimerEntry>((a, b) => a.at < b.at);
  private serial = 0;
  private busyCount = 0;

  /** When a host may be served next, by its own wait and its key's rest (ms; 0: now or unknown). */
  nextAt(slot: number): number {
    const host = this.hosts.get(slot);
    if (host === undefined) return 0;
    const key = host.key === undefined ? undefined : this.keys.get(host.key);
    return Math.max(host.notBefore, key?.nextAt ?? 0);
  }

  /** Requests handed out and not yet released. */
  get busy(): number {
    return this.busyCount;
  }

  /** Adds a host or changes what is known of it. */
  set(slot: number, work: HostWork, now: number): void {
    let host = this.hosts.get(slot);
    if (host === undefined) {
      host = { slot, key: undefined, out: [], band: undefined, notBefore: 0, served: 0, connections: 1 };
      this.hosts.set(slot, host);
    }
    if ('priority' in work) host.band = work.priority === undefined ? undefined : Math.floor(work.priority / PRIORITY_BAND);
    if (work.notBefore !== undefined) host.notBefore = work.notBefore;
    if (work.connections !== undefined) host.connections = work.connections;
    if ('key' in work && work.key !== host.key) {
      if (host.key !== undefined) {
        const old = this.keys.get(host.key)!;
        old.hosts.delete(host);
        this.file(old, now);
      }
      host.key = work.key;
    }
    if (host.key !== undefined) {
      let key = this.keys.get(host.key);
      if (key === undefined) {
        key = { id: host.key, hosts: new Set(), out: 0, resting: [], nextAt: 0, served: 0, version: 0 };
        this.keys.set(host.key, key);
      }
      key.hosts.add(host);
      this.file(key, now);
    }
  }

  /**
   * The host to fetch from now, holding a slot of its key until release();
   * undefined when nothing is ready (see wakeAt()).
   */
  take(now: number): number | undefined {
    return this.takeTicket(now)?.slot;
  }

  /**
   * take(), naming the key the request goes to: given back to release(), it
   * frees that key's slot even when the host's requests end out of order and
   * the host moved address between them.
   */
  takeTicket(now: number): Ticket | undefined {
    for (let timer = this.timers.peek(); timer !== undefined && timer.at <= now; timer = this.timers.peek()) {
      this.timers.pop();
      this.file(timer.key, now);
    }
    for (let entry = this.ready.pop(); entry !== undefined; entry = this.ready.pop()) {
      const key = entry.key;
      if (entry.version !== key.version || freeSlots(key, now) === 0) continue;
      const host = this.bestHost(key, now);
      if (host === undefined) continue;
      key.out += 1;
      host.out.push(key);
      key.served = host.served = ++this.serial;
      this.busyCount += 1;
      // Another slot may be free: filed again behind the keys served before it.
      this.file(key, now);
      return { slot: host.slot, key: key.id };
    }
    return undefined;
  }

  /**
   * A request is over: the ticket's (or, given a slot alone, the host's
   * oldest, right only when one is out); its slot of the key rests `delayMs`
   * from now. A key with requests out is never dropped, so the ticket's key
   * id names the very key it was taken from.
   */
  release(taken: number | Ticket, now: number, delayMs: number): void {
    const slot = typeof taken === 'number' ? taken : taken.slot;
    const host = this.hosts.get(slot);
    const at = host === undefined ? -1 : typeof taken === 'number' ? (host.out.length > 0 ? 0 : -1) : host.out.findIndex((k) => k.id === taken.key);
    if (host === undefined || at < 0) throw new Error(`release(${slot}): no request of this host is out`);
    const key = host.out.splice(at, 1)[0]!;
    key.out -= 1;
    if (delayMs > 0) key.resting.push(now + delayMs);
    this.busyCount -= 1;
    this.file(key, now);
    // A host moved while its request was out was passed over by its new key; file that one again.
    const current = host.key === undefined ? undefined : this.keys.get(host.key);
    if (current !== undefined && current !== key) this.file(current, now);
  }

  /** The earliest time something may become ready, or undefined when nothing waits on time. */
  wakeAt(): number | undefined {
    return this.timers.peek()?.at;
  }

  /** Puts a key in the ready heap or on a timer, as its state says. */
  private file(key: KeyState, now: number): void {
    key.version += 1;
    key.resting = key.resting.filter((at) => at > now);
    const limit = connectionsOf(key);
    // The slots to wait for beyond those out: the soonest rests to end.
    const waitFor = key.out + key.resting.length - limit + 1;
    key.nextAt = waitFor > 0 && waitFor <= key.resting.length ? key.resting.sort((a, b) => a - b)[waitFor - 1]! : 0;
    if (key.out >= limit) return;
    if (key.hosts.size === 0) {
      // Only this very key: a stale timer may name one replaced since under the same id.
      if (key.out === 0 && key.resting.length === 0 && this.keys.get(key.id) === key) this.keys.delete(key.id);
      return;
    }
    let wake = Infinity;
    for (const host of key.hosts) if (host.band !== undefined && host.notBefore > now) wake = Math.min(wake, host.notBefore);
    if (key.nextAt > now) {
      this.timers.push({ key, at: key.nextAt });
      return;
    }
    const host = this.bestHost(key, now);
    if (host !== undefined) this.ready.push({ key, version: key.version, band: host.band!, served: host.served, keyServed: key.served });
    if (wake !== Infinity) this.timers.push({ key, at: wake });
  }

  private bestHost(key: KeyState, now: number): HostState | undefined {
    const limit = connectionsOf(key);
    let best: HostState | undefined;
    for (const host of key.hosts) {
      if (host.band === undefined || host.notBefore > now || host.out.length >= limit) continue;
      if (best === undefined || before(host as { band: number; served: number }, best as { band: number; served: number })) best = host;
    }
    return best;
  }
}

/** A key's slots: the smallest `connections` of its hosts (the strictest rule on a shared address). */
function connectionsOf(key: KeyState): number {
  let limit = Infinity;
  for (const host of key.hosts) limit = Math.min(limit, host.connections);
  return limit === Infinity ? 1 : limit;
}

/** Slots of a key neither out nor resting at `now`. */
function freeSlots(key: KeyState, now: number): number {
  let taken = key.out;
  for (const at of key.resting) if (at > now) taken += 1;
  return Math.max(0, connectionsOf(key) - taken);
}
