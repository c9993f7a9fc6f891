/**
 * Working-tree evidence for a driven agent: the driven-turn activity reads the fingerprint of the
 * agent's working directory (a real git repository) after each turn, and a turn's own claim to a
 * tree (the driver's output is the agent's) is dropped. A real dev server and worker, the `command`
 * driver running a shell agent.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { finalStatus } from '../helpers/agents.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
// The in-process worker reads the tree under this machine's load: a roomier limit than the default 200 ms.
process.env.WARDEN_TREE_TIMEOUT_MS = '5000';

const stack = useStack();

test("each driven turn carries its working tree's fingerprint, read by warden, never the agent's claim", async () => {
  const workDir = mkdtempSync(join(tmpdir(), 'warden-tree-driven-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workDir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } }).trim();
  // Turn 1 writes a file and claims another tree; turn 2 changes nothing and says it is done.
  const agent = [
    'cat > /dev/null',
    'if [ -f notes.txt ]; then',
    '  echo \'{"turn": {"text": "all done"}, "done": true}\'',
    'else',
    '  echo first > notes.txt',
    `  echo '{"turn": {"text": "wrote notes", "tree": {"head": "${'f'.repeat(40)}", "hash": "deadbeefdeadbeef", "files": 99}}, "done": false}'`,
    'fi',
    '',
  ].join('\n');
  writeFileSync(join(workDir, 'agent.sh'), agent);
  git('init', '-q');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const head = git('rev-parse', 'HEAD');

  await stack.warden.start({
    agentId: 'tree-driven',
    task: 'Write notes.',
    driver: { kind: 'command', command: ['sh', join(workDir, 'agent.sh')] },
    driven: { workDir, killGraceMs: 2_000 },
    supervisor: { idleAfterMs: 0 },
  });
  const end = await finalStatus(stack.warden.handle('tree-driven'));
  expect(end).toMatchObject({ state: 'done', turns: 2 });
  // notes.txt is new (untracked): one path differs from HEAD; both turns saw that same tree.
  expect(end.tree).toEqual({ head, files: 1, unchangedTurns: 2, atLeast: true });
});
