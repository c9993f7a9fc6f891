/** The same tool call denied again and again (Claude Code's PermissionDenied, reported with `denied: true`) is SPIRALING evidence. */
import { describe, expect, it } from 'vitest';
import { DETECTORS, heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { repeatedDenial } from '../../src/domain/judgement/heuristic/denied.js';
import { TurnSchema, type Turn } from '../../src/domain/contract/schemas.js';
import { unknownTurnFields } from '../../src/domain/contract/limits.js';

const denied = (name: string, args: string): Turn =>
  TurnSchema.parse({ text: '', toolCalls: [{ name, args, result: 'denied: the auto mode classifier blocked it', ok: false, denied: true }] });
const ran = (name: string, args: string, ok = true): Turn => TurnSchema.parse({ text: '', toolCalls: [{ name, args, result: 'done', ok }] });
const ctx = (turns: Turn[], from = 0) => ({ task: 'fix the build', turns, reason: 'interval' as const, from });
const RM = 'Bash {"command":"rm -rf /tmp/build"}';
const [tool, args] = [RM.split(' ')[0]!, RM.slice(5)];

describe('repeatedDenial', () => {
  it('the same call denied three times: SPIRALING, resting on the three denials', () => {
    const turns = [denied(tool, args), ran('Read', '{"file_path":"a.ts"}'), denied(tool, args), denied(tool, args)];
    const f = repeatedDenial(ctx(turns));
    expect(f).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', turns: [0, 2, 3] });
    expect(f!.message).toContain('denied 3 times');
    expect(f!.message).toContain('rm -rf /tmp/build');
    const v = heuristicVerdict({ task: 'fix the build', turns });
    expect(v).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', evidence: [1, 3, 4] });
  });

  it('twice is not yet a spiral', () => {
    expect(repeatedDenial(ctx([denied(tool, args), denied(tool, args)]))).toBeNull();
  });

  it('different inputs are different requests', () => {
    const turns = [denied(tool, '{"command":"rm a"}'), denied(tool, '{"command":"rm b"}'), denied(tool, '{"command":"rm c"}')];
    expect(repeatedDenial(ctx(turns))).toBeNull();
  });

  it('the same input to another tool is another call', () => {
    expect(repeatedDenial(ctx([denied('Bash', args), denied('Bash', args), denied('Monitor', args)]))).toBeNull();
  });

  it('a call that went through after its denials (its human allowed it) is not counted', () => {
    expect(repeatedDenial(ctx([denied(tool, args), denied(tool, args), denied(tool, args), ran(tool, args)]))).toBeNull();
  });

  it('a failed call is not a denial', () => {
    expect(repeatedDenial(ctx([ran(tool, args, false), ran(tool, args, false), ran(tool, args, false)]))).toBeNull();
  });

  it('context turns complete the count only when an evidence turn continues it', () => {
    const turns = [denied(tool, args), denied(tool, args), denied(tool, args), ran('Read', '{}')];
    expect(repeatedDenial(ctx(turns, 3))).toBeNull();
    const more = [...turns, denied(tool, args)];
    expect(repeatedDenial(ctx(more, 3))).toMatchObject({ turns: [4] });
  });

  it('a payload field that is not a boolean is refused by the turn schema, naming it', () => {
    const r = TurnSchema.safeParse({ text: '', toolCalls: [{ name: 'Bash', denied: 'yes' }] });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues[0]?.path)).toBe('["toolCalls",0,"denied"]');
  });

  it('the client takes `denied` as a tool call field (it refuses unknown ones before sending)', () => {
    expect(unknownTurnFields({ text: '', toolCalls: [{ name: 'Bash', args: 'rm x', ok: false, denied: true }] })).toEqual([]);
    expect(unknownTurnFields({ text: '', toolCalls: [{ name: 'Bash', refused: true }] })).toEqual(['toolCalls.0.refused']);
  });

  it('runs before the generic repeated-failure detector (its message is the more precise one)', () => {
    const names = DETECTORS.map(([n]) => n);
    expect(names.indexOf('repeatedDenial')).toBeLessThan(names.indexOf('repeatedFailure'));
    expect(names.indexOf('repeatedDenial')).toBeGreaterThan(names.indexOf('claims'));
  });
});
