import { describe, expect, it } from 'vitest';
import { deliveriesInWindow, evidenceFrame, firstEvidenceNumber, hasEvidenceTurns, turnIndex, turnNumber } from '../../src/domain/judgement/evidence.js';

describe('evidenceFrame', () => {
  it('numbers turns from firstTurnNumber and clamps evidenceFrom', () => {
    const f = evidenceFrame(5, 2, 11);
    expect([turnNumber(f, 0), turnNumber(f, 4), firstEvidenceNumber(f)]).toEqual([11, 15, 13]);
    expect([turnIndex(f, 11), turnIndex(f, 15), turnIndex(f, 16), turnIndex(f, 10), turnIndex(f, 12.5)]).toEqual([0, 4, -1, -1, -1]);
    expect(evidenceFrame(5, 99).evidenceFrom).toBe(5);
    expect(evidenceFrame(5, -3).evidenceFrom).toBe(0);
    expect(evidenceFrame(5).firstTurnNumber).toBe(1);
    expect(hasEvidenceTurns(evidenceFrame(5, 5))).toBe(false);
    expect(hasEvidenceTurns(evidenceFrame(5, 4))).toBe(true);
  });
});

describe('deliveriesInWindow', () => {
  it('maps turn numbers to indices and drops deliveries outside the window', () => {
    const ds = [
      { beforeTurn: 12, type: 'CORRECTION' as const, text: 'old' },
      { beforeTurn: 36, type: 'CORRECTION' as const, text: 'first' },
      { beforeTurn: 51, type: 'STEERING' as const, text: 'pending' },
      { beforeTurn: 52, type: 'STEERING' as const, text: 'beyond' },
    ];
    expect(deliveriesInWindow(ds, 31, 20)).toEqual([
      { beforeIndex: 5, type: 'CORRECTION', text: 'first' },
      { beforeIndex: 20, type: 'STEERING', text: 'pending' },
    ]);
  });
});
