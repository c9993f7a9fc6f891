/**
 * SPIRALING from the working tree (judgement/tree.ts): the same command failing in three turns or
 * more while the tree stays exactly as it was, so nothing the agent did between the attempts could
 * change their outcome. Stronger than repeatedFailure, which reads the transcript alone: an error
 * that changes each time is not taken as someone fixing things when the tree shows nothing was
 * fixed. Fires only on turns that carry fingerprints (hooked and driven agents in a git tree).
 */
import { shortHead, treeStuck } from '../tree.js';
import type { Detector } from './types.js';

const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);

export const unchangedTree: Detector = ({ turns, from }) => {
  const stuck = treeStuck(turns, from);
  if (!stuck) return null;
  const { streak, failures } = stuck;
  return {
    kind: 'CORRECTION',
    pattern: 'SPIRALING',
    message:
      `You have run ${clip(stuck.command)} ${failures} times and it failed each time, while the working tree stayed exactly the same ` +
      `(HEAD ${shortHead(streak.tree.head)}, ${streak.tree.files} file${streak.tree.files === 1 ? '' : 's'} changed, no edit for ${streak.atLeast ? 'at least ' : ''}${streak.turns} turns): ` +
      'nothing between the attempts could change the outcome. Read the error and change the code or the approach, or ask for help.',
    turns: stuck.evidence,
    key: `tree\u0000${stuck.signature}`,
  };
};
