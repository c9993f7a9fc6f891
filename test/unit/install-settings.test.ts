/**
 * `warden install|uninstall`'s merge (src/hooks/install/): over many shapes of an existing
 * settings file, the hooks land where Claude Code and Codex read them, everything else stays byte
 * for byte, a second run changes nothing, and uninstall takes out exactly what install put in.
 */
import { describe, expect, test } from 'vitest';
import { parse } from 'jsonc-parser';
import { planInstall, planUninstall } from '../../src/hooks/install/change.js';
import { unifiedDiff } from '../../src/hooks/install/diff.js';
import { SettingsError } from '../../src/hooks/install/json-edit.js';
import { sha256 } from '../../src/hooks/install/record.js';
import {
  HOOK_EVENTS,
  detachedCommand,
  httpHandler,
  installHooks,
  isForwarderCommand,
  isOnlyWardenHookCommand,
  isWardenCommand,
  isWardenHandler,
  isWardenHookCommand,
  isWardenHttpHandler,
  uninstallHooks,
  type HookPlan,
} from '../../src/hooks/install/settings.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../src/json-depth.js';

/** The forwarder by its full path (the `warden` on PATH is another CLI), and by its name. */
const CMD = "'/usr/bin/node' '/opt/warden/dist/src/hooks/forward.js' claude";
const claude: HookPlan = { agent: 'claude', command: CMD };
const codex: HookPlan = { agent: 'codex', command: 'warden-hook codex' };

type Settings = {
  hooks?: Record<string, Array<{ matcher?: string; hooks: Array<{ type: string; command: string; url?: string; timeout?: number }> }>>;
} & Record<string, unknown>;
const value = (text: string) => parse(text) as Settings;

/** Every event warden plans has exactly one warden handler, the planned one, with the planned matcher. */
function expectInstalled(text: string, plan: HookPlan): void {
  const s = value(text);
  for (const e of HOOK_EVENTS[plan.agent]) {
    const groups = s.hooks?.[e.event] ?? [];
    const ours = groups.flatMap((g) => g.hooks.filter((h) => isWardenHandler(h, plan.agent)).map((h) => ({ g, h })));
    expect(ours, e.event).toHaveLength(1);
    if (plan.http && e.http) expect(ours[0]!.h, e.event).toEqual(httpHandler(plan.http, 30));
    else expect(ours[0]!.h, e.event).toEqual({ type: 'command', command: e.detach ? detachedCommand(plan.command) : plan.command, timeout: e.timeout ?? 30 });
    if (ours[0]!.g.hooks.length === 1) expect(ours[0]!.g.matcher, e.event).toBe(e.matcher);
  }
}

/**
 * Install, install again, uninstall: installed, idempotent, and the original text back byte for
 * byte — through the record install keeps, always; by taking the hooks out alone, too, except
 * where the user had an empty `hooks` or event list (then it is gone: the same settings otherwise).
 */
function roundTrip(before: string, plan: HookPlan = claude, structuralExact = true): string {
  const once = installHooks(before, plan);
  expect(once.changed).toBe(true);
  expectInstalled(once.text, plan);
  const twice = installHooks(once.text, plan);
  expect(twice).toMatchObject({ changed: false, text: once.text });
  const i = planInstall('/p/settings.json', before, null, plan);
  expect(i.after).toBe(once.text);
  expect(planUninstall('/p/settings.json', i.after, i.record, plan.agent).after).toBe(before);
  const back = uninstallHooks(once.text, plan.agent);
  if (structuralExact) expect(back.text).toBe(before);
  else expect(value(back.text)).toEqual(withoutEmpty(value(before)));
  return once.text;
}

/** Settings without empty hook lists or an empty hooks object. */
function withoutEmpty(s: Settings): Settings {
  const hooks = Object.fromEntries(Object.entries(s.hooks ?? {}).filter(([, v]) => v.length));
  const { hooks: _drop, ...rest } = s;
  return Object.keys(hooks).length ? { ...rest, hooks } : rest;
}

describe('install then uninstall gives back the same bytes', () => {
  test('an empty object', () => {
    const after = roundTrip('{}');
    expect(after.startsWith('{\n  "hooks": {\n    "UserPromptSubmit": [')).toBe(true);
  });

  test('an empty object with a trailing newline, and one spread over lines', () => {
    roundTrip('{}\n');
    roundTrip('{\n}\n', claude, false); // taken out alone, the object is written `{}`
  });

  test('other settings, four-space indent, no trailing newline', () => {
    const before = '{\n    "model": "opus",\n    "permissions": {\n        "allow": ["Bash(npm test)"]\n    }\n}';
    const after = roundTrip(before);
    expect(
      after.startsWith(
        '{\n    "model": "opus",\n    "permissions": {\n        "allow": ["Bash(npm test)"]\n    },\n    "hooks": {\n        "UserPromptSubmit"',
      ),
    ).toBe(true);
    expect(after.endsWith('}')).toBe(true);
  });

  test('tab indentation is followed', () => {
    const after = roundTrip('{\n\t"model": "opus"\n}\n');
    expect(after).toContain('\n\t"hooks": {\n\t\t"UserPromptSubmit": [\n\t\t\t{');
  });

  test('comments anywhere are kept', () => {
    const before =
      '// user settings\n{\n  /* the model */\n  "model": "opus", // inline\n  "hooks": {\n    // lint first\n    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "lint.sh" }] }]\n  }\n}\n';
    const after = roundTrip(before);
    for (const c of ['// user settings', '/* the model */', '// inline', '// lint first']) expect(after).toContain(c);
  });

  test("another hook on the same event: warden's group comes after it, the user's untouched", () => {
    const before = JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] }] } }, null, 2);
    const after = roundTrip(before);
    const pre = value(after).hooks!.PreToolUse!;
    expect(pre).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] },
      { matcher: '*', hooks: [{ type: 'command', command: CMD, timeout: 30 }] },
    ]);
  });

  test('several matcher groups on several events, and events warden does not use', () => {
    const before = JSON.stringify(
      {
        hooks: {
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'a' }] },
            {
              matcher: 'Edit|Write',
              hooks: [
                { type: 'command', command: 'b' },
                { type: 'command', command: 'c' },
              ],
            },
          ],
          Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }],
        },
        env: { FOO: '1' },
      },
      null,
      2,
    );
    const after = roundTrip(before);
    const s = value(after);
    // The user's Notification hook stays first; warden's (waiting for a human) is added after it.
    expect(s.hooks!.Notification).toHaveLength(2);
    expect(s.hooks!.Notification![0]).toEqual({ hooks: [{ type: 'command', command: 'notify-send hi' }] });
    expect(s.hooks!.PreToolUse).toHaveLength(3);
    expect(s.hooks!.Stop).toHaveLength(2);
    expect(s.env).toEqual({ FOO: '1' });
  });

  test('one-line arrays and objects stay on one line', () => {
    const before = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}, "model": "m"}\n';
    const after = roundTrip(before);
    expect(after.split('\n')[0]).toContain('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}, { "hooks": [ {');
  });

  test('an empty hooks object, and an empty event list', () => {
    roundTrip('{\n  "hooks": {}\n}\n', claude, false);
    roundTrip('{\n  "hooks": {\n    "Stop": []\n  }\n}\n', claude, false);
  });

  test('codex hooks.json with a description', () => {
    const before = '{\n  "description": "team hooks",\n  "hooks": {\n    "SessionStart": [{ "hooks": [{ "type": "command", "command": "motd" }] }]\n  }\n}\n';
    const after = roundTrip(before, codex);
    expect(Object.keys(value(after).hooks!)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PermissionRequest',
      'PostToolUse',
      'Stop',
      'PreCompact',
      'PostCompact',
      'SubagentStart',
      'SubagentStop',
      'SessionEnd',
    ]);
    expect(value(after).hooks!.PostToolUseFailure).toBeUndefined(); // codex has no such event
  });
});

describe('StopFailure and PermissionDenied (Claude Code)', () => {
  test('StopFailure runs in the background (claude -p kills a hook still running as it exits); PermissionDenied matches every tool', () => {
    const s = value(installHooks(null, claude).text);
    expect(s.hooks!.StopFailure).toEqual([{ hooks: [{ type: 'command', command: detachedCommand(claude.command), timeout: 30 }] }]);
    expect(detachedCommand('warden-hook claude')).toBe('{ warden-hook claude <&3 >/dev/null 2>&1 & } 3<&0');
    expect(isWardenCommand(detachedCommand(claude.command), 'claude')).toBe(true);
    expect(s.hooks!.PermissionDenied).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: claude.command, timeout: 30 }] }]);
    expect(value(installHooks(null, codex).text).hooks!.StopFailure).toBeUndefined(); // codex has no such event
    const again = installHooks(installHooks(null, claude).text, claude);
    expect(again.changed).toBe(false);
    const un = uninstallHooks(installHooks(null, claude).text, 'claude');
    expect(un.actions).toContain("removed warden's hook from StopFailure");
    expect(un.actions).toContain("removed warden's hook from PermissionDenied");
  });
});

describe('sub-agents', () => {
  test('SubagentStart and SubagentStop are hooked for Claude Code and codex, with no matcher', () => {
    for (const plan of [claude, codex]) {
      const s = value(installHooks(null, plan).text);
      for (const e of ['SubagentStart', 'SubagentStop'])
        expect(s.hooks![e], `${plan.agent} ${e}`).toEqual([{ hooks: [{ type: 'command', command: plan.command, timeout: 30 }] }]);
    }
  });
});

describe('compaction reporting (PreCompact / PostCompact)', () => {
  test('both agents get a hook on PreCompact and PostCompact, with no matcher (manual and auto)', () => {
    for (const plan of [claude, codex]) {
      const s = value(installHooks(null, plan).text);
      for (const e of ['PreCompact', 'PostCompact'])
        expect(s.hooks![e], `${plan.agent} ${e}`).toEqual([{ hooks: [{ type: 'command', command: plan.command, timeout: 30 }] }]);
    }
    expect(Object.keys(value(installHooks(null, claude).text).hooks!)).toEqual([
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'PermissionDenied',
      'Notification',
      'Stop',
      'StopFailure',
      'PreCompact',
      'PostCompact',
      'SubagentStart',
      'SubagentStop',
      'SessionEnd',
    ]);
  });

  test("an install from before compaction was hooked: a second install adds exactly the two; uninstall takes out only warden's", () => {
    const older = {
      hooks: Object.fromEntries(
        HOOK_EVENTS.claude
          .filter((e) => !/Compact$/.test(e.event))
          .map((e) => [
            e.event,
            [{ ...(e.matcher ? { matcher: e.matcher } : {}), hooks: [{ type: 'command', command: e.detach ? detachedCommand(CMD) : CMD, timeout: 30 }] }],
          ]),
      ),
    };
    // The user's own PreCompact hook, there before.
    older.hooks.PreCompact = [{ hooks: [{ type: 'command', command: 'backup-transcript', timeout: 5 }] }];
    const before = `${JSON.stringify(older, null, 2)}\n`;
    const r = installHooks(before, claude);
    expect(r.actions).toEqual(["added warden's hook to PreCompact (after the 1 already there)", "added warden's hook to PostCompact"]);
    expectInstalled(r.text, claude);
    expect(value(r.text).hooks!.PreCompact![0]).toEqual({ hooks: [{ type: 'command', command: 'backup-transcript', timeout: 5 }] });
    expect(installHooks(r.text, claude).changed).toBe(false);
    const un = uninstallHooks(r.text, 'claude');
    expect(un.actions.filter((a) => /Compact/.test(a))).toEqual(["removed warden's hook from PreCompact", "removed warden's hook from PostCompact"]);
    expect(value(un.text)).toEqual({ hooks: { PreCompact: [{ hooks: [{ type: 'command', command: 'backup-transcript', timeout: 5 }] }] } });
  });
});

describe('codex session end', () => {
  test('codex gets a SessionEnd hook with the 3 s codex allows it (a longer one is clamped, with a warning at every start)', () => {
    const s = value(installHooks(null, codex).text);
    expect(s.hooks!.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: 'warden-hook codex', timeout: 3 }] }]);
    expect(s.hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'warden-hook codex', timeout: 30 }] }]);
  });

  test('a codex SessionEnd hook with a longer timeout is updated in place to 3 s; uninstall takes it out', () => {
    const mine = value(installHooks(null, codex).text);
    mine.hooks!.SessionEnd = [{ hooks: [{ type: 'command', command: 'warden hook codex', timeout: 30 }] }];
    const r = installHooks(JSON.stringify(mine, null, 2), codex);
    expect(r.actions).toEqual(['updated an older warden hook on SessionEnd']);
    expect(value(r.text).hooks!.SessionEnd![0]!.hooks[0]!.timeout).toBe(3);
    expect(value(uninstallHooks(r.text, 'codex').text)).toEqual({});
  });
});

describe('a missing or empty file', () => {
  test('missing: created with the hooks, two-space JSON and a final newline', () => {
    const r = installHooks(null, claude);
    expect(r.changed).toBe(true);
    expect(r.text.endsWith('}\n')).toBe(true);
    expectInstalled(r.text, claude);
    expect(Object.keys(value(r.text))).toEqual(['hooks']);
  });

  test('empty or blank: written whole', () => {
    for (const t of ['', '\n', '  \n']) expectInstalled(installHooks(t, claude).text, claude);
  });

  test('uninstall of a missing file changes nothing', () => {
    expect(uninstallHooks(null, 'claude').changed).toBe(false);
  });
});

describe('already or partly installed, or an older warden hook', () => {
  test("already installed (by another tool's formatting): nothing changes", () => {
    const mine = installHooks(null, claude).text;
    const reformatted = JSON.stringify(value(mine)); // same hooks, other bytes
    expect(installHooks(reformatted, claude)).toMatchObject({ changed: false, text: reformatted });
  });

  test('partly installed: only the missing events are added', () => {
    const partial = JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: CMD, timeout: 30 }] }] } }, null, 2);
    const r = installHooks(partial, claude);
    expect(r.actions).toEqual([
      "added warden's hook to UserPromptSubmit",
      "added warden's hook to PostToolUse",
      "added warden's hook to PostToolUseFailure",
      "added warden's hook to PermissionDenied",
      "added warden's hook to Notification",
      "added warden's hook to Stop",
      "added warden's hook to StopFailure",
      "added warden's hook to PreCompact",
      "added warden's hook to PostCompact",
      "added warden's hook to SubagentStart",
      "added warden's hook to SubagentStop",
      "added warden's hook to SessionEnd",
    ]);
    expectInstalled(r.text, claude);
    expect(r.text.startsWith(partial.slice(0, partial.lastIndexOf(']') + 1))).toBe(true); // the PreToolUse block untouched
  });

  test('an older hand-written warden hook (--agent, another path, no timeout) is updated in place', () => {
    const old = JSON.stringify(
      {
        hooks: {
          PostToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh' }] },
            { matcher: '*', hooks: [{ type: 'command', command: 'warden hook claude --agent fixer' }] },
          ],
        },
      },
      null,
      2,
    );
    const r = installHooks(old, claude);
    expect(r.actions).toContain('updated an older warden hook on PostToolUse');
    expectInstalled(r.text, claude);
    const post = value(r.text).hooks!.PostToolUse!;
    expect(post[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh' }] });
    expect(post[1]).toEqual({ matcher: '*', hooks: [{ type: 'command', command: CMD, timeout: 30 }] });
    expect(installHooks(r.text, claude).changed).toBe(false);
  });

  test("a warden hook sharing a group with the user's: only the handler is updated, the group kept", () => {
    const old = JSON.stringify(
      {
        hooks: {
          Stop: [
            {
              hooks: [
                { type: 'command', command: 'say done' },
                { type: 'command', command: 'warden hook claude', timeout: 9 },
              ],
            },
          ],
        },
      },
      null,
      2,
    );
    const r = installHooks(old, claude);
    expect(value(r.text).hooks!.Stop).toEqual([
      {
        hooks: [
          { type: 'command', command: 'say done' },
          { type: 'command', command: CMD, timeout: 30 },
        ],
      },
    ]);
    // Uninstall takes the handler out of the shared group and leaves the user's.
    expect(value(uninstallHooks(r.text, 'claude').text).hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'say done' }] }]);
  });

  test('two warden hooks on one event: the second is removed', () => {
    const h = { type: 'command', command: CMD, timeout: 30 };
    const twice = JSON.stringify({ hooks: { Stop: [{ hooks: [h] }, { hooks: [h] }] } }, null, 2);
    const r = installHooks(twice, claude);
    expect(r.actions).toContain('removed a second warden hook on Stop');
    expectInstalled(r.text, claude);
  });

  test('a codex install leaves a claude hook alone, and the other way round', () => {
    const both = installHooks(installHooks(null, claude).text, { agent: 'codex', command: 'warden hook codex' }).text;
    expectInstalled(both, claude);
    const noCodex = uninstallHooks(both, 'codex').text;
    expectInstalled(noCodex, claude);
    expect(noCodex).not.toContain('hook codex');
  });
});

describe('refusals name the problem and change nothing', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '{"hooks": ', /not valid JSON \(.+ at line 1/],
    ['a trailing comma', '{"model": "x",}', /not valid JSON/],
    ['an array', '[]', /not a JSON object/],
    ['hooks is a list', '{"hooks": []}', /"hooks" is not an object/],
    ['an event is an object', '{"hooks": {"Stop": {}}}', /"hooks.Stop" is not a list/],
  ];
  for (const [what, text, message] of cases) {
    test(what, () => {
      expect(() => installHooks(text, claude, '/p/.claude/settings.json')).toThrow(SettingsError);
      expect(() => installHooks(text, claude, '/p/.claude/settings.json')).toThrow(message);
    });
  }
  test('uninstall refuses a file that is not JSON', () => {
    expect(() => uninstallHooks('{oops', 'claude')).toThrow(/not valid JSON/);
  });
});

test('warden hook commands are recognised; others are not', () => {
  for (const c of [
    'warden hook claude',
    'warden hook claude --agent fixer',
    '/usr/local/bin/warden hook claude',
    "'/usr/bin/node' '/x/dist/src/cli/main.js' hook claude",
    'node /x/dist/src/cli/main.js --address 127.0.0.1:7233 hook claude --timeout 20000',
    'warden hook claude 2>>/tmp/log',
  ])
    expect(isWardenHookCommand(c, 'claude'), c).toBe(true);
  for (const c of ['lint.sh', 'warden hook codex', 'echo warden hook claude-ish', 'mywarden hook claude', 'warden status x', 'warden hook claudex'])
    expect(isWardenHookCommand(c, 'claude'), c).toBe(false);
  expect(isWardenHookCommand('warden hook codex', 'codex')).toBe(true);
  expect(isWardenHookCommand(42, 'claude')).toBe(false);
});

describe('the whole change, with what install remembers', () => {
  const path = '/p/.claude/settings.json';

  test('a file install created is removed again', () => {
    const i = planInstall(path, null, null, claude);
    expect(i.record).toEqual({ path, before: null, after: sha256(i.after!) });
    const u = planUninstall(path, i.after, i.record, 'claude');
    expect(u).toMatchObject({ after: null, changed: true, record: null });
  });

  test('an empty file install wrote into is put back empty', () => {
    const i = planInstall(path, '', null, claude);
    expect(planUninstall(path, i.after, i.record, 'claude').after).toBe('');
  });

  test('a second install keeps the first "before"', () => {
    const first = planInstall(path, '{"a": 1}', null, claude);
    const newer = planInstall(path, first.after, first.record, { agent: 'claude', command: 'warden hook claude' });
    expect(newer.changed).toBe(true);
    expect(newer.record!.before).toBe('{"a": 1}');
    expect(planUninstall(path, newer.after, newer.record, 'claude').after).toBe('{"a": 1}');
    // No change: the record stays as it was.
    expect(planInstall(path, newer.after, newer.record, { agent: 'claude', command: 'warden hook claude' })).toMatchObject({
      changed: false,
      record: newer.record,
    });
  });

  test('an older hand-written warden hook comes back exactly on uninstall', () => {
    const old = '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "warden hook claude --agent fixer"}]}]\n  }\n}\n';
    const i = planInstall(path, old, null, claude);
    expect(planUninstall(path, i.after, i.record, 'claude').after).toBe(old);
  });

  test("a file changed since install: warden's hooks come out, the user's later change stays", () => {
    const i = planInstall(path, '{\n  "model": "a"\n}\n', null, claude);
    const edited = i.after!.replace('"model": "a"', '"model": "b"');
    const u = planUninstall(path, edited, i.record, 'claude');
    expect(u.after).toBe('{\n  "model": "b"\n}\n');
  });

  test('a stale record (for other bytes) is not used by install', () => {
    const stale = { path, before: 'something else', after: sha256('not this file') };
    const i = planInstall(path, '{}', stale, claude);
    expect(i.record!.before).toBe('{}');
  });
});

test('the diff is a unified diff of the change', () => {
  expect(unifiedDiff('a\nb\n', 'a\nb\n', 'f')).toBe('');
  expect(unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', 'f')).toBe('--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
  expect(unifiedDiff(null, 'x\n', 'f')).toBe('--- /dev/null\n+++ f\n@@ -0,0 +1,1 @@\n+x\n');
  expect(unifiedDiff('x\n', null, 'f')).toBe('--- f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n');
  // Two changes far apart: two hunks.
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n';
  const b = a.replace('l1\n', 'L1\n').replace('l18\n', 'L18\n');
  expect(unifiedDiff(a, b, 'f').match(/^@@/gm)).toHaveLength(2);
});

describe('what the user wrote around warden is kept', () => {
  const stopOnly = (handler: Record<string, unknown>) => JSON.stringify({ hooks: { Stop: [{ hooks: [handler] }] } }, null, 2);

  test('a hand-tuned Stop hook keeps its --timeout and its longer timeout; a second install changes nothing', () => {
    const before = stopOnly({ type: 'command', command: 'warden hook claude --timeout 300000', timeout: 310 });
    const same = installHooks(before, { agent: 'claude', command: 'warden hook claude' });
    expect(value(same.text).hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'warden hook claude --timeout 300000', timeout: 310 }] }]);
    expect(same.actions.filter((a) => / Stop$/.test(a))).toEqual([]);
    // Another CLI path: the command is updated, the user's tuning goes along.
    const moved = installHooks(before, claude);
    expect(moved.actions).toContain('updated an older warden hook on Stop');
    expect(value(moved.text).hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: `${CMD} --timeout 300000`, timeout: 310 }] }]);
    expect(installHooks(moved.text, claude).changed).toBe(false);
    expect(
      planUninstall(
        '/p/s.json',
        ...(() => {
          const i = planInstall('/p/s.json', before, null, claude);
          return [i.after, i.record] as const;
        })(),
        'claude',
      ).after,
    ).toBe(before);
  });

  test('a timeout shorter than warden needs is still raised; a codex SessionEnd stays at the 3 s codex allows', () => {
    const r = installHooks(stopOnly({ type: 'command', command: 'warden hook claude', timeout: 5 }), { agent: 'claude', command: 'warden hook claude' });
    expect(value(r.text).hooks!.Stop![0]!.hooks[0]!.timeout).toBe(30);
    const cx = value(installHooks(null, codex).text);
    cx.hooks!.SessionEnd = [{ hooks: [{ type: 'command', command: 'warden hook codex --timeout 2500', timeout: 600 }] }];
    const s = value(installHooks(JSON.stringify(cx), codex).text).hooks!.SessionEnd!;
    expect(s).toEqual([{ hooks: [{ type: 'command', command: 'warden-hook codex --timeout 2500', timeout: 3 }] }]);
  });

  test("a handler that runs warden's hook inside a larger command is the user's: install and uninstall leave it alone", () => {
    const mine = { type: 'command', command: '~/bin/audit-log.sh; warden hook claude', timeout: 60 };
    const before = stopOnly(mine);
    const i = installHooks(before, claude);
    expect(i.changed).toBe(true);
    const s = value(i.text);
    expect(s.hooks!.Stop, 'no second warden hook next to it').toEqual([{ hooks: [mine] }]);
    expect(s.hooks!.PreToolUse).toHaveLength(1); // the other events are installed
    expect(i.kept).toEqual([`kept your handler on Stop that runs warden's hook inside ${JSON.stringify(mine.command)}; warden adds none of its own there`]);
    expect(installHooks(i.text, claude).changed).toBe(false);
    const u = uninstallHooks(i.text, 'claude');
    expect(u.text).toBe(before);
    expect(u.kept[0]).toMatch(/^left your handler on Stop as it is: .*audit-log\.sh; warden hook claude.* take it out by hand$/);
    expect(planUninstall('/p/s.json', i.text, null, 'claude').actions.at(-1)).toMatch(/left your handler on Stop/);
  });

  test('a shared group: the wrapped handler stays, a bare warden handler beside it is still managed', () => {
    const before = JSON.stringify({
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'say done && warden hook claude' },
              { type: 'command', command: 'warden hook claude', timeout: 9 },
            ],
          },
        ],
      },
    });
    const r = installHooks(before, claude);
    expect(value(r.text).hooks!.Stop).toEqual([
      {
        hooks: [
          { type: 'command', command: 'say done && warden hook claude' },
          { type: 'command', command: CMD, timeout: 30 },
        ],
      },
    ]);
    expect(value(uninstallHooks(r.text, 'claude').text).hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'say done && warden hook claude' }] }]);
  });

  test('whole warden hook commands, and commands that only contain one', () => {
    for (const c of [
      'warden hook claude',
      'warden hook claude --agent fixer',
      '/usr/local/bin/warden hook claude',
      '~/bin/warden hook claude',
      '"$HOME/bin/warden" hook claude',
      "'/usr/bin/node' '/x/dist/src/cli/main.js' hook claude",
      'node /x/dist/src/cli/main.js --address 127.0.0.1:7233 hook claude --timeout 20000',
      'WARDEN_AUTO_START=0 warden hook claude',
      'warden hook claude 2>>/tmp/log',
      'warden hook claude >/tmp/log 2>&1',
    ])
      expect(isOnlyWardenHookCommand(c, 'claude'), c).toBe(true);
    for (const c of [
      '~/bin/audit-log.sh; warden hook claude',
      'warden hook claude; ~/bin/after.sh',
      'warden hook claude && say done',
      'warden hook claude || true',
      'tee -a /tmp/in | warden hook claude',
      'warden hook claude &',
      "sh -c 'warden hook claude'",
      'warden hook claude `date`',
      'warden hook claude $(cat flags)',
      'lint.sh',
      'warden hook codex',
    ])
      expect(isOnlyWardenHookCommand(c, 'claude'), c).toBe(false);
  });
});

describe('a user edit between two installs', () => {
  const path = '/p/.claude/settings.json';
  const count = (text: string | null) => (text ?? '').match(/hook claude|forward\.js' claude/g)?.length ?? 0;

  for (const [what, edit, second] of [
    [
      'an unrelated key, then an install with other connection flags',
      (t: string) => t.replace('{\n', '{\n  "model": "opus",\n'),
      { agent: 'claude', command: 'warden --namespace other hook claude' },
    ],
    [
      "an unrelated key and warden's Stop hook deleted by hand, then the same install",
      (t: string) => {
        const s = JSON.parse(t);
        s.model = 'opus';
        delete s.hooks.Stop;
        return JSON.stringify(s, null, 2);
      },
      claude,
    ],
  ] as Array<[string, (t: string) => string, HookPlan]>) {
    test(`${what}: uninstall takes out exactly warden's hooks, keeps the edit, and says so`, () => {
      const original = '{\n  "permissions": {"allow": ["Bash(npm test)"]}\n}\n';
      const first = planInstall(path, original, null, claude);
      const edited = edit(first.after!);
      const again = planInstall(path, edited, first.record, second);
      expect(again.changed).toBe(true);
      expect(count(again.after)).toBe(13);
      const u = planUninstall(path, again.after, again.record, 'claude');
      expect(count(u.after), u.after!).toBe(0);
      expect(value(u.after!)).toEqual({ permissions: { allow: ['Bash(npm test)'] }, model: 'opus' });
      expect(u.actions.join('\n')).not.toMatch(/restored/);
      expect(u.actions).toContain("removed warden's hook from UserPromptSubmit");
    });
  }

  test('an older hand-written warden hook put back by uninstall is named in what it says', () => {
    const old = '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "warden hook claude --agent fixer"}]}]\n  }\n}\n';
    const i = planInstall(path, old, null, claude);
    expect(planUninstall(path, i.after, i.record, 'claude').actions).toEqual([
      'restored the file as it was before warden install (with the warden hooks it had then)',
    ]);
  });
});

describe('nesting too deep to read', () => {
  const deep = (n: number) => `{"hooks": {"x": ${'['.repeat(n)}${']'.repeat(n)}}}`;

  test('a 200,000-deep settings file is refused naming the file, for install and uninstall', () => {
    for (const f of [
      () => installHooks(deep(200_000), claude, '/p/.claude/settings.json'),
      () => uninstallHooks(deep(200_000), 'claude', '/p/.claude/settings.json'),
    ]) {
      expect(f).toThrow(SettingsError);
      expect(f).toThrow(/^\/p\/\.claude\/settings\.json nests arrays and objects deeper than 512 levels \(at line 1, column 527\)/);
    }
    // At the limit it is read (and merged) as usual.
    expect(installHooks(deep(510), claude).changed).toBe(true);
  });

  test('brackets in strings and comments do not count; the line and column are where the limit is crossed', () => {
    expect(jsonTooDeep(`{"a": "${'['.repeat(1000)}", "b": "\\"[[[["}`, 'x')).toBeNull();
    expect(jsonTooDeep(`// ${'{'.repeat(1000)}\n/* ${'['.repeat(1000)} */ {}`, 'x')).toBeNull();
    expect(jsonTooDeep('[[[\n  [[', 'the turn', 4)).toBe(
      'the turn nests arrays and objects deeper than 4 levels (at line 2, column 4); warden reads JSON nested at most 4 deep',
    );
    expect(jsonTooDeep('[[]][[]][[]]', 'x', 2)).toBeNull();
    expect(MAX_JSON_DEPTH).toBe(512);
  });
});

describe('the hook endpoint: http handlers in user scope, the forwarder everywhere else', () => {
  const TOKEN = 'ab'.repeat(32);
  const URL_ = 'http://127.0.0.1:8788/hooks/claude';
  const user: HookPlan = { agent: 'claude', command: 'warden-hook claude', http: { url: URL_, token: TOKEN } };
  const project: HookPlan = { agent: 'claude', command: 'warden-hook claude' };
  const HTTP_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'];
  const http = (url = URL_, token = TOKEN, timeout = 30) => ({
    type: 'http',
    url,
    headers: {
      Authorization: `Bearer ${token}`,
      'X-Warden-Project-Dir': '$CLAUDE_PROJECT_DIR',
      'X-Warden-Auto-Start': '$WARDEN_AUTO_START',
      'X-Warden-Agent': '$WARDEN_AGENT_ID',
    },
    allowedEnvVars: ['CLAUDE_PROJECT_DIR', 'WARDEN_AUTO_START', 'WARDEN_AGENT_ID'],
    timeout,
  });
  const handlers = (text: string) => Object.entries(value(text).hooks!).map(([event, groups]) => [event, groups.flatMap((g) => g.hooks)] as const);

  test('claude --user: the http handler of the spec on PreToolUse, PostToolUse, PostToolUseFailure; the forwarder on every other event', () => {
    const text = roundTrip('{\n  "model": "opus"\n}\n', user);
    const s = value(text);
    expect(Object.keys(s.hooks!)).toEqual(HOOK_EVENTS.claude.map((e) => e.event));
    for (const [event, hs] of handlers(text)) {
      expect(hs, event).toHaveLength(1);
      if (HTTP_EVENTS.includes(event)) expect(hs[0], event).toEqual(http());
      else
        expect(hs[0], event).toEqual({
          type: 'command',
          command: event === 'StopFailure' ? detachedCommand('warden-hook claude') : 'warden-hook claude',
          timeout: 30,
        });
    }
    expect(s.hooks!.PreToolUse![0]!.matcher).toBe('*');
    // The key order is the spec's, as Claude Code's /hooks shows it.
    expect(Object.keys(s.hooks!.PostToolUse![0]!.hooks[0]!)).toEqual(['type', 'url', 'headers', 'allowedEnvVars', 'timeout']);
    expect(text.match(new RegExp(TOKEN, 'g'))).toHaveLength(3);
  });

  test('claude project scope and codex: the forwarder on every event, no http handler, no token', () => {
    for (const plan of [project, codex]) {
      const text = roundTrip('{}\n', plan);
      for (const [event, hs] of handlers(text)) {
        expect(hs, `${plan.agent} ${event}`).toHaveLength(1);
        expect(hs[0]!.type, `${plan.agent} ${event}`).toBe('command');
        expect(isForwarderCommand(hs[0]!.command, plan.agent)).toBe(true);
      }
      expect(text).not.toContain('Bearer');
    }
  });

  test('an old `warden hook claude` install is upgraded in place (the user keeps their own hooks and tuning); a second install changes nothing', () => {
    const old = installHooks(
      JSON.stringify({ model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] }] } }, null, 2),
      { agent: 'claude', command: 'warden hook claude' },
    ).text;
    // The user tuned warden's Stop hook by hand.
    const tuned = old.replace(
      /("Stop": \[\s*\{\s*"hooks": \[\s*\{\s*"type": "command",\s*"command": )"warden hook claude",(\s*"timeout": )30/,
      '$1"warden hook claude --timeout 300000",$2310',
    );
    expect(tuned).not.toBe(old);
    for (const plan of [user, project]) {
      const r = installHooks(tuned, plan);
      expect(r.actions).toEqual(HOOK_EVENTS.claude.map((e) => `updated an older warden hook on ${e.event}`));
      expectInstalled(r.text.replace('warden-hook claude --timeout 300000', 'warden-hook claude').replace('"timeout": 310', '"timeout": 30'), plan);
      const s = value(r.text);
      expect(s.model).toBe('opus');
      expect(s.hooks!.PreToolUse![0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] });
      expect(s.hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'warden-hook claude --timeout 300000', timeout: 310 }] }]);
      expect(r.text).not.toMatch(/warden hook claude/);
      expect(installHooks(r.text, plan)).toMatchObject({ changed: false, text: r.text });
      // Through the record, uninstall gives back the old install byte for byte; without it, every warden hook goes.
      const i = planInstall('/h/.claude/settings.json', tuned, null, plan);
      expect(planUninstall('/h/.claude/settings.json', i.after, i.record, 'claude').after).toBe(tuned);
      expect(value(uninstallHooks(r.text, 'claude').text)).toEqual({
        model: 'opus',
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] }] },
      });
    }
  });

  test('switching scope shapes in place: user → project turns the http handlers into the forwarder (the token leaves the file)', () => {
    const u = installHooks(null, user).text;
    const p = installHooks(u, project);
    expect(p.actions).toEqual(HTTP_EVENTS.map((e) => `updated an older warden hook on ${e}`));
    expectInstalled(p.text, project);
    expect(p.text).not.toContain(TOKEN);
    const back = installHooks(p.text, user);
    expect(back.text).toBe(u);
  });

  test('a new token, port or connection flags update the http handlers in place; a longer timeout the user set is kept', () => {
    const first = installHooks(null, user).text;
    const rotated = installHooks(first, { ...user, http: { url: URL_, token: 'cd'.repeat(32) } });
    expect(rotated.actions).toEqual(HTTP_EVENTS.map((e) => `updated an older warden hook on ${e}`));
    expect(rotated.text).not.toContain(TOKEN);
    const moved = `http://[::1]:9911/hooks/claude?address=t.example%3A7233&task_queue=q`;
    const r = installHooks(
      first.replace(
        '"timeout": 30\n          }\n        ]\n      }\n    ],\n    "PostToolUse"',
        '"timeout": 90\n          }\n        ]\n      }\n    ],\n    "PostToolUse"',
      ),
      {
        ...user,
        http: { url: moved, token: TOKEN },
      },
    );
    const s = value(r.text);
    expect(s.hooks!.PreToolUse![0]!.hooks[0]).toEqual(http(moved, TOKEN, 90));
    expect(s.hooks!.PostToolUse![0]!.hooks[0]).toEqual(http(moved));
    expect(installHooks(r.text, { ...user, http: { url: moved, token: TOKEN } }).changed).toBe(false);
  });

  test('uninstall removes http handlers (any loopback port), forwarders and old `warden hook` commands; the rest stays', () => {
    const mine = { type: 'command', command: 'lint.sh' };
    const theirs = { type: 'http', url: 'https://audit.example/hooks/claude' };
    const before = JSON.stringify(
      {
        hooks: {
          PreToolUse: [{ matcher: '*', hooks: [mine, http('http://localhost:9000/hooks/claude?namespace=x')] }],
          PostToolUse: [{ matcher: '*', hooks: [http('http://127.0.0.1:8788/hooks/claude')] }, { hooks: [theirs] }],
          PostToolUseFailure: [{ hooks: [{ type: 'http', url: 'http://[::1]:1/hooks/claude' }] }],
          Stop: [{ hooks: [{ type: 'command', command: "'/usr/bin/node' '/a b/dist/src/hooks/forward.js' claude --agent fixer --strict" }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'warden hook claude' }] }],
          SessionEnd: [{ hooks: [{ type: 'command', command: 'warden-hook --timeout 2000 claude' }] }],
          UserPromptSubmit: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:8788/hooks/codex' }] }],
        },
      },
      null,
      2,
    );
    const u = uninstallHooks(before, 'claude');
    expect(value(u.text)).toEqual({
      hooks: {
        PreToolUse: [{ matcher: '*', hooks: [mine] }],
        PostToolUse: [{ hooks: [theirs] }],
        UserPromptSubmit: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:8788/hooks/codex' }] }],
      },
    });
    expect(u.actions).toHaveLength(6);
    expect(value(uninstallHooks(u.text, 'codex').text)).toEqual({
      hooks: { PreToolUse: [{ matcher: '*', hooks: [mine] }], PostToolUse: [{ hooks: [theirs] }] },
    });
  });

  test('which handlers are warden http handlers', () => {
    for (const url of [
      'http://127.0.0.1:8788/hooks/claude',
      'http://127.0.0.2:1/hooks/claude?address=x',
      'http://localhost:8788/hooks/claude',
      'http://[::1]:8788/hooks/claude',
    ])
      expect(isWardenHttpHandler({ type: 'http', url }, 'claude'), url).toBe(true);
    for (const h of [
      { type: 'http', url: 'https://127.0.0.1:8788/hooks/claude' },
      { type: 'http', url: 'http://10.0.0.1:8788/hooks/claude' },
      { type: 'http', url: 'http://127.0.0.1.example.com:8788/hooks/claude' },
      { type: 'http', url: 'http://127.0.0.1:8788/hooks/claude/x' },
      { type: 'http', url: 'http://127.0.0.1:8788/hooks/codex' },
      { type: 'http', url: 'http://u:p@127.0.0.1:8788/hooks/claude' },
      { type: 'http', url: 'not a url' },
      { type: 'command', url: 'http://127.0.0.1:8788/hooks/claude', command: 'x' },
      null,
    ])
      expect(isWardenHttpHandler(h, 'claude'), JSON.stringify(h)).toBe(false);
    expect(isWardenHandler(httpHandler({ url: 'http://127.0.0.1:8788/hooks/codex', token: TOKEN }), 'codex')).toBe(true);
  });

  test('which commands run the forwarder; one inside a larger command is the user’s', () => {
    for (const c of [
      'warden-hook claude',
      'warden-hook claude --address 127.0.0.1:7233 --namespace default --task-queue q',
      "warden-hook claude --namespace 'team a'",
      '/usr/local/bin/warden-hook claude',
      'warden-hook --strict claude',
      'warden-hook --agent fixer claude --timeout 9000',
      "'/usr/bin/node' '/opt/my tools/dist/src/hooks/forward.js' claude",
      'node /x/dist/src/hooks/forward.js claude --strict',
      'WARDEN_AUTO_START=0 warden-hook claude 2>>/tmp/log',
    ]) {
      expect(isForwarderCommand(c, 'claude'), c).toBe(true);
      expect(isOnlyWardenHookCommand(c, 'claude'), c).toBe(true);
      expect(isWardenCommand(c, 'claude'), c).toBe(true);
      expect(isWardenHookCommand(c, 'claude'), c).toBe(false);
    }
    for (const c of [
      'warden-hook codex',
      'mywarden-hook claude',
      'warden-hook claudex',
      'node /x/forward.js claude',
      'node /x/myhooks/forward.js claude',
      'warden-hook',
      'lint.sh claude',
    ])
      expect(isForwarderCommand(c, 'claude'), c).toBe(false);
    for (const c of ['audit.sh; warden-hook claude', 'warden-hook claude && say done', 'tee /tmp/x | node /x/dist/src/hooks/forward.js claude']) {
      expect(isWardenCommand(c, 'claude'), c).toBe(true);
      expect(isOnlyWardenHookCommand(c, 'claude'), c).toBe(false);
    }
    const wrapped = JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'audit.sh; warden-hook claude' }] }] } });
    const r = installHooks(wrapped, user);
    expect(value(r.text).hooks!.Stop).toEqual([{ hooks: [{ type: 'command', command: 'audit.sh; warden-hook claude' }] }]);
    expect(r.kept[0]).toMatch(/^kept your handler on Stop/);
    expect(uninstallHooks(r.text, 'claude').text).toBe(wrapped);
  });

  test('install refuses to write what it would not recognise as its own', () => {
    expect(() => installHooks(null, { agent: 'claude', command: 'lint.sh' })).toThrow(/not a warden hook command/);
    expect(() => installHooks(null, { ...user, http: { url: 'http://10.0.0.1:8788/hooks/claude', token: TOKEN } })).toThrow(/not a loopback URL/);
  });
});
