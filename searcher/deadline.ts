/**
 * An engine call under the caller's signal and the query timeout, settled
 * as soon as either fires whether or not the engine has noticed yet: the
 * race shared by searches (search.ts) and suggestions (suggest.ts).
 */

/** How the call ended: its value, or why not (the caller's abort, the timeout, the engine's own failure). */
export type Settled<T> = { ok: true; value: T } | { ok: false; why: 'cancelled' | 'timeout' | 'failed'; err: unknown };

/** Runs `call` with one signal that fires on the caller's abort or after `timeoutMs`. */
export async function withDeadline<T>(signal: AbortSignal, timeoutMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<Settled<T>> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('query timeout'));
  }, timeoutMs);
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const stopped = new Promise<never>((_, reject) => {
    if (controller.signal.aborted) reject(controller.signal.reason);
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  try {
    // The race hears a late rejection of either promise, so an engine slow to notice the abort is no unhandled rejection.
    return { ok: true, value: await Promise.race([call(controller.signal), stopped]) };
  } catch (err) {
    return { ok: false, why: signal.aborted ? 'cancelled' : timedOut ? 'timeout' : 'failed', err };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
