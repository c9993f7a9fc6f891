/**
 * The watch's timer, kept across watches.
 *
 * An external agent is watched until something wakes it (a queued evaluation, a stop, continue-as-
 * new) or until its idle/orphan deadline. `condition(fn, timeout)` starts a timer per watch and
 * cancels it when the watch wakes, so every interval evaluation cost a cancelled timer and a new
 * one: two commands, two history events and the SDK's promise bookkeeping of a cancellation scope
 * and a race, on the busiest path of a fleet. Here one timer serves successive watches while the
 * deadline does not move earlier (src/domain/agent/next-step.ts `keptTimerAction`); a timer that
 * fires early ends a watch with nothing to do, and the next plan starts a timer for the rest.
 */
import { CancellationScope, condition, sleep } from '@temporalio/workflow';
import { keptTimerAction, type KeptTimer } from '../src/domain/agent/next-step.js';

export class WatchTimer {
  private timer: (KeptTimer & { scope: CancellationScope }) | null = null;

  /**
   * Waits until `wake()` holds (true) or the deadline `now + timeoutMs` passes (false); without a
   * timeout, only for `wake()`.
   */
  until(wake: () => boolean, now: number, timeoutMs: number | undefined): Promise<boolean> {
    const action = keptTimerAction(this.timer, now, timeoutMs);
    if (action === 'cancel' || action === 'start') this.cancel();
    if (action === 'start') this.start(now + timeoutMs!, timeoutMs!);
    const timer = this.timer;
    let woke = false;
    // Not an async method: one `.then` instead of an async function's promise and its await (the
    // SDK captures a stack trace for every promise made in workflow context; this runs every wake).
    return condition(() => {
      if (wake()) return (woke = true);
      return timer !== null && timer.fired;
    }).then(() => {
      if (!woke && timer?.fired) this.timer = null;
      return woke;
    });
  }

  private start(firesAt: number, timeoutMs: number): void {
    const scope = new CancellationScope();
    const timer = { firesAt, fired: false, scope };
    this.timer = timer;
    // The sleep is started in the scope and handled there; `run` gets a settled promise to await, so
    // its own settles at once and only the timer's promise and its handler stay pending while the
    // agent waits (not also `run`'s async call and its await).
    void scope.run(() => {
      sleep(Math.max(1, timeoutMs)).then(
        () => (timer.fired = true),
        () => undefined, // cancelled: a later plan replaced it
      );
      return Promise.resolve();
    });
  }

  private cancel(): void {
    if (this.timer && !this.timer.fired) this.timer.scope.cancel();
    this.timer = null;
  }
}
