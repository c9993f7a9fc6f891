/** The self-sabotage tripwire (src/hooks/self-control.ts): which tool calls target warden's controls of the agent itself. */
import { describe, expect, it } from 'vitest';
import { DETECTORS, heuristicJudgement } from '../../src/domain/judgement/heuristic/index.js';
import { SELF_CONTROL_TOOL, selfControlAttempt } from '../../src/domain/judgement/heuristic/self-control.js';
import { abortOf, abortedAnswer } from '../../src/hooks/handle.js';
import { mcpSelfControl, selfControlCall, splitShell } from '../../src/hooks/self-control.js';

const SELF = 'proj-1a2b3c4d5e6f';
const hit = (command: string | string[], field: 'command' | 'cmd' = 'command') => selfControlCall({ [field]: command }, SELF);

describe('hits: warden verbs on the agent itself', () => {
  it.each([
    `warden dismiss ${SELF}`,
    `warden resume ${SELF}`,
    `warden block ${SELF} --reason "waiting"`,
    `warden unblock ${SELF}`,
    `warden stop ${SELF}`,
    `warden abort ${SELF}`,
    `warden pause ${SELF}`,
    `warden steer ${SELF} all good`,
    `warden report ${SELF} --text "tests pass"`,
    `warden start ${SELF} --task again`,
    `warden --address 127.0.0.1:7233 dismiss ${SELF}`,
    `warden --namespace=default resume ${SELF}`,
    `warden dismiss --note "false alarm" ${SELF}`,
    `warden hook claude --agent ${SELF}`,
    `warden hook claude --agent=${SELF}`,
    `npx warden resume ${SELF}`,
    `npx -y warden dismiss ${SELF}`,
    `npm exec warden -- dismiss ${SELF}`,
    `pnpm dlx warden dismiss ${SELF}`,
    `yarn warden resume ${SELF}`,
    `bunx warden dismiss ${SELF}`,
    `node /opt/warden/dist/src/cli/main.js dismiss ${SELF}`,
    `node ./dist/src/cli/main.js resume ${SELF}`,
    `node --enable-source-maps /x/y/main.js dismiss ${SELF}`,
    `./node_modules/.bin/warden dismiss ${SELF}`,
    `/usr/local/bin/warden dismiss ${SELF}`,
    `TEMPORAL_ADDRESS=127.0.0.1:7233 warden dismiss ${SELF}`,
    `env -i PATH=/usr/bin warden dismiss ${SELF}`,
    `sudo -u me warden dismiss ${SELF}`,
    `timeout 10 warden dismiss ${SELF}`,
    `nohup warden resume ${SELF} &`,
    `sh -c 'warden dismiss ${SELF}'`,
    `bash -lc "warden dismiss ${SELF}"`,
    `cd /tmp && warden dismiss ${SELF}`,
    `true; warden dismiss ${SELF}`,
    `false || warden dismiss ${SELF}`,
    `echo y | warden dismiss ${SELF}`,
    `ls\nwarden dismiss ${SELF}`,
    `(warden dismiss ${SELF})`,
    `{ warden dismiss ${SELF}; }`,
    `if true; then warden dismiss ${SELF}; fi`,
    `echo $(warden dismiss ${SELF})`,
    `echo "\`warden resume ${SELF}\`"`,
    `eval "warden dismiss ${SELF}"`,
    `'warden' "dismiss" '${SELF}'`,
    `w\\arden dismiss ${SELF}`,
    `warden dismiss ${SELF} 2>/dev/null`,
    `warden uninstall claude`,
    `bash <<'EOF'\nwarden dismiss ${SELF}\nEOF`,
  ])('%s', (command) => {
    expect(hit(command), command).not.toBeNull();
  });
});

describe('hits: Temporal on agent-<self>', () => {
  const W = `agent-${SELF}`;
  it.each([
    `temporal workflow signal --workflow-id ${W} --name resume`,
    `temporal workflow signal -w ${W} --name dismiss --input '{}'`,
    `temporal workflow signal --workflow-id=${W} --name resume`,
    `temporal workflow signal -w=${W} --name resume`,
    `temporal --address 127.0.0.1:7233 workflow signal -w ${W} --name resume`,
    `temporal workflow signal --query "WorkflowId = '${W}'" --name resume --yes`,
    `temporal workflow update execute -w ${W} --name reportTurn --input '{}'`,
    `temporal workflow terminate -w ${W} --reason done`,
    `temporal workflow reset -w ${W} --type FirstWorkflowTask`,
    `temporal workflow cancel --workflow-id ${W}`,
    `temporal workflow delete -w ${W}`,
    `temporal activity fail --workflow-id ${W} --activity-id 3`,
    `tctl workflow signal -w ${W} -n resume`,
    `tctl --ns default wf signal --workflow_id ${W} --name resume`,
    `tctl wf terminate -w ${W}`,
    `TEMPORAL_ADDRESS=localhost:7233 temporal workflow signal -w ${W} --name resume`,
    `sh -c "temporal workflow signal -w ${W} --name resume"`,
    `curl -X POST http://127.0.0.1:7243/api/v1/namespaces/default/workflows/${W}/signal/resume -d '{}'`,
  ])('%s', (command) => {
    expect(hit(command), command).not.toBeNull();
  });

  it('argv as codex gives it, and a `cmd` field', () => {
    expect(hit(['bash', '-lc', `warden dismiss ${SELF}`])).not.toBeNull();
    expect(hit(['warden', 'resume', SELF])).not.toBeNull();
    expect(hit(`temporal workflow signal -w ${W} --name resume`, 'cmd')).not.toBeNull();
  });

  it('says what it was', () => {
    expect(hit(`warden dismiss ${SELF}`)).toEqual({ what: `warden dismiss ${SELF}`, command: `warden dismiss ${SELF}` });
    expect(hit(`temporal workflow signal --workflow-id ${W} --name resume`)?.what).toBe(`temporal workflow signal of ${W}`);
  });
});

describe('not hits', () => {
  it.each([
    'warden dismiss proj-other',
    `warden dismiss ${SELF}x`,
    `warden dismiss ${SELF}.child`,
    `warden resume x${SELF}`,
    `warden status ${SELF}`,
    `warden status ${SELF} --json`,
    'warden list',
    `warden top --once`,
    `warden cases export ${SELF}`,
    `npx warden status ${SELF}`,
    `temporal workflow describe -w agent-${SELF}`,
    `temporal workflow show -w agent-${SELF}`,
    `temporal workflow query -w agent-${SELF} --type status`,
    `temporal workflow update describe -w agent-${SELF} --update-id x`,
    `temporal workflow signal -w agent-proj-other --name resume`,
    `temporal workflow signal -w agent-${SELF}.tests --name resume`,
    `temporal workflow signal -w ${SELF} --name resume`,
    `echo "warden dismiss ${SELF}"`,
    `echo 'temporal workflow signal -w agent-${SELF} --name resume'`,
    `grep -r "warden dismiss ${SELF}" docs/`,
    `cat notes.md # warden dismiss ${SELF}`,
    `git commit -m "warden dismiss ${SELF}"`,
    `sh -c 'echo warden dismiss ${SELF}'`,
    `cat > notes.md <<'EOF'\nwarden dismiss ${SELF}\nEOF`,
    'npm test',
    'npm run build',
    `node script.js dismiss ${SELF}`,
    `curl http://127.0.0.1:8233/namespaces/default/workflows/agent-${SELF}`,
    '',
  ])('%s', (command) => {
    expect(hit(command), command).toBeNull();
  });

  it('tool inputs without a command', () => {
    expect(selfControlCall({ file_path: 'x.md', content: `warden dismiss ${SELF}` }, SELF)).toBeNull();
    expect(selfControlCall(null, SELF)).toBeNull();
    expect(selfControlCall('warden dismiss', SELF)).toBeNull();
    expect(selfControlCall({ command: 42 }, SELF)).toBeNull();
  });

  it('does not hang or recurse without end', () => {
    const deep = `${'sh -c "'.repeat(20)}warden dismiss ${SELF}${'"'.repeat(20)}`;
    expect(() => hit(deep)).not.toThrow();
    expect(hit(`echo $(((((( ${'('.repeat(1000)}`)).toBeNull();
    expect(hit(`echo "unterminated ${SELF}`)).toBeNull();
  });
});

describe("warden's MCP tools on the agent itself", () => {
  const guard = {
    home: '/home/u',
    wardenHome: '/home/u/.warden',
    endpointFile: '/home/u/.warden/hook-endpoint.json',
    endpoint: { host: '127.0.0.1', port: 8788 },
    tokenFiles: [],
    codexHome: '/home/u/.codex',
    pids: [],
  };
  const call = (tool: string, input: Record<string, unknown>) => selfControlCall(input, SELF, { guard: () => guard, cwd: '/repo', tool } as never);
  it.each(['steer', 'pause', 'resume', 'dismiss', 'abort'])('mcp__warden__%s on itself is a hit, under any server name', (verb) => {
    expect(mcpSelfControl(`mcp__warden__${verb}`, { agentId: SELF, text: 'all good' }, SELF)?.what).toContain(verb);
    expect(mcpSelfControl(`mcp__my_fleet__${verb}`, { agentId: ` ${SELF} ` }, SELF)).not.toBeNull();
    expect(mcpSelfControl(`mcp__warden__${verb}`, { agentId: `agent-${SELF}` }, SELF)).not.toBeNull();
  });
  it('through the tripwire the hook runs (the tool name given)', () => {
    expect(call('mcp__warden__dismiss', { agentId: SELF, note: 'false alarm' })?.what).toBe("dismiss through warden's MCP tools (mcp__warden__dismiss)");
  });
  it('not hits: reading, starting, another agent, another tool, no agentId', () => {
    expect(mcpSelfControl('mcp__warden__list_agents', { agentId: SELF }, SELF)).toBeNull();
    expect(mcpSelfControl('mcp__warden__agent_status', { agentId: SELF }, SELF)).toBeNull();
    expect(mcpSelfControl('mcp__warden__start', { agentId: SELF, task: 'x' }, SELF)).toBeNull();
    expect(mcpSelfControl('mcp__warden__steer', { agentId: 'proj-other', text: 'x' }, SELF)).toBeNull();
    expect(mcpSelfControl('Bash', { agentId: SELF }, SELF)).toBeNull();
    expect(mcpSelfControl('mcp__warden__resume', {}, SELF)).toBeNull();
    expect(mcpSelfControl('mcp__warden__resume', null, SELF)).toBeNull();
  });
});

describe('splitShell', () => {
  it('splits commands and resolves quotes', () => {
    expect(splitShell(`a 'b c' "d\\"e" f\\ g; h && i | j`).commands).toEqual([['a', 'b c', 'd"e', 'f g'], ['h'], ['i'], ['j']]);
    expect(splitShell('echo $(warden x) `y z`').substitutions).toEqual(['warden x', 'y z']);
  });
});

describe('the judgement of a recorded attempt', () => {
  const attempt = {
    text: 'The hook denied a Bash call.',
    toolCalls: [{ name: SELF_CONTROL_TOOL, args: `warden dismiss ${SELF}`, result: 'denied', ok: false }],
  };
  const work = { text: 'Editing the parser.', toolCalls: [{ name: 'Edit', args: '{"file_path":"src/parse.ts"}', result: 'ok', ok: true }] };

  it("is REWARD_HACKING ahead of every other detector, resting on the attempt, and not the model's to overrule", () => {
    const r = heuristicJudgement({ task: 'Fix the parser.', turns: [work, attempt, work], firstTurnNumber: 7 });
    expect(r.verdict).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING', evidence: [8] });
    expect(r.verdict.message).toMatch(/its own supervision \("warden dismiss proj-1a2b3c4d5e6f"\)/);
    expect(r.tampered).toBe(r.verdict.message);
    expect(DETECTORS[0]![0]).toBe('selfControl');
  });

  it('only among the evidence turns', () => {
    expect(heuristicJudgement({ task: 'Fix the parser.', turns: [attempt, work], evidenceFrom: 1 }).verdict.pattern).not.toBe('REWARD_HACKING');
    expect(selfControlAttempt({ turns: [work], from: 0 })).toBeNull();
  });
});

describe('an aborted agent', () => {
  const t = (event: string, cause: string) => ({
    from: 'running' as const,
    to: 'failed' as const,
    event: event as 'abort',
    cause,
    at: '2026-11-28T04:00:00.000Z',
  });
  it('is told from other ends', () => {
    expect(abortOf({ state: 'failed', stateReason: 'aborted: wrong direction', transitions: [t('abort', 'aborted: wrong direction')] })).toEqual({
      reason: 'aborted: wrong direction',
      at: '2026-11-28T04:00:00.000Z',
    });
    expect(abortOf({ state: 'failed', stateReason: 'circuit open', transitions: [t('fail', 'circuit open')] })).toBeNull();
    expect(abortOf({ state: 'done', stateReason: 'stopped', transitions: [] })).toBeNull();
    expect(abortOf({ state: 'running', stateReason: null, transitions: [t('abort', 'x')] })).toBeNull();
  });

  it('every event has its answer: deny, end the turn, tell the prompt, else nothing', () => {
    const a = { reason: 'aborted: by a human', at: null };
    expect(abortedAnswer('PreToolUse', 'fixer', a)?.hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^warden: agent fixer was aborted \(aborted: by a human\)/),
    });
    expect(abortedAnswer('PostToolUse', 'fixer', a)).toMatchObject({ continue: false });
    expect(abortedAnswer('UserPromptSubmit', 'fixer', a)?.hookSpecificOutput?.additionalContext).toMatch(/new session/);
    for (const e of ['Stop', 'SessionEnd', 'PreCompact', 'Notification', undefined]) expect(abortedAnswer(e, 'fixer', a)).toBeNull();
  });
});
