/**
 * The `warden dev` demo: one externally running agent that keeps retrying the same failing build.
 * Shows the ladder at work (whisper, stronger whisper, escalation and pause) and how to resume it.
 */
import { WardenClient } from '../client/index.js';
import type { DevServer } from '../devserver/server.js';
import { commandFor, wardenCommand } from './invocation.js';
import { print } from './output.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runDemo(server: DevServer, taskQueue: string, stopping: Promise<unknown>): Promise<void> {
  let cancelled = false;
  void stopping.then(() => (cancelled = true));
  const client = await WardenClient.connect({ address: server.address, namespace: server.namespace, taskQueue });
  try {
    const agentId = `demo-${new Date().toISOString().slice(11, 19).replaceAll(':', '')}`;
    const { workflowId } = await client.start({
      agentId,
      task: 'Make `npm run build` pass in the demo repository.',
      supervisor: { evalInterval: 5, idleAfterMs: 0 },
    });
    print(`demo: agent ${agentId} (workflow ${workflowId}) keeps retrying a failing build; warden evaluates every 5 turns.`);
    for (let i = 1; i <= 15 && !cancelled; i++) {
      const reply = await client.reportTurn(agentId, {
        id: `turn-${i}`,
        text: 'The build failed again; retrying the build.',
        toolCalls: [{ name: 'shell', args: 'npm run build', result: "error TS2307: Cannot find module './config'", ok: false }],
      });
      for (const w of reply.whispers) print(`  turn ${i}: warden whispers [${w.type}] ${w.text}`);
      if (i % 5 === 0) {
        // Wait for this evaluation so the demo reads in order.
        for (let t = 0; t < 100; t++) {
          const s = await client.status(agentId);
          if (s.evaluations.total >= i / 5) break;
          await sleep(100);
        }
      }
      await sleep(50);
    }
    const s = await client.status(agentId);
    const pending = await client.pendingWhispers(agentId);
    for (const w of pending) print(`  queued for the next turn: [${w.type}] ${w.text}`);
    print(`demo: ${agentId} is ${s.state}${s.paused ? ` (${s.pauseReason})` : ''}, escalation step ${s.escalationStep}/${s.escalationThreshold}.`);
    print(
      `demo: resume it with the Temporal CLI:  ${commandFor('temporal', server.temporalCli)} workflow signal --address ${server.address} --workflow-id ${workflowId} --name resume`,
    );
    print(`      or:  ${wardenCommand()}${server.address === '127.0.0.1:7233' ? '' : ` --address ${server.address}`} resume ${agentId}`);
    if (server.uiUrl) print(`      and look at it in the Web UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows/${workflowId}`);
  } finally {
    await client.close();
  }
}
