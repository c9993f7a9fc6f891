/**
 * Patches a run takes without asking Temporal: the version travels in the continue-as-new input.
 *
 * Every `patched(id)` that returns true in a run records a marker and, in Temporal's core SDK, an
 * upsert of the `TemporalChangeVersion` search attribute: an event and a visibility write each. A
 * warden run takes ~6 of them (12 events of its ~240) and an agent continues as new every ~43 turns,
 * so a busy fleet paid them over and over (README "Capacity", "A continued run asks no patch again").
 *
 * Outside replay `patched()` always answers true, so a run that continues another run which already
 * took a patch needs no marker to know it: the taken patches are carried (`CarriedState.patches`),
 * and the continued run answers from that list. Replaying such a run reads the same list from its
 * start event, so it decides the same way. Runs started by a client, and runs continued from
 * histories recorded before this list existed, ask `patched()` as before.
 *
 * The cost: a release older than this one cannot replay a run continued by this one (it would ask
 * `patched()`, find no marker and take the old path). Rolling back past it means resetting or
 * terminating the agents' runs continued after the upgrade. That is what removing a patch (Temporal's
 * last step in retiring one) costs too; here it happens per agent, as soon as its run continues.
 */
import type { PatchId } from './context.js';

/**
 * `patched` answered from `taken` first; a patch Temporal grants is added to `taken` (the list the
 * run carries on). A patch Temporal refuses (a history recorded before it) is not remembered: the
 * next run, on this code, takes it.
 */
export function patchGate(taken: PatchId[], ask: (id: PatchId) => boolean): (id: PatchId) => boolean {
  return (id) => {
    if (taken.includes(id)) return true;
    const granted = ask(id);
    if (granted) taken.push(id);
    return granted;
  };
}
