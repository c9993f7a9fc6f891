/**
 * Group-budget benchmark: worker CPU per turn with labels and group budgets against the same run
 * without, side by side on the same dev server.
 *
 *   npm run build && node dist/bench/group-budget.js --agents 1000 --groups 20 --period 10 --duration 60 [--rounds 3]
 *
 * Each side gets a fresh worker process (`node dist/workers/main.js`) on the same server and its
 * own task queue, N external agents that report one warm-up turn, then one turn every `--period` s
 * each (open loop, first turns spread over the period) for `--duration` s. Side `plain`: agents
 * without labels. Side `withGroups`: every agent labelled `bench=g<k>` (k < `--groups`), each group
 * with a budget far above what the run spends, so the counters count but never pause. What the
 * group side costs the worker is what the design costs: the labelled agents publish their spend
 * every 30 s at most (an upsert in a task they run anyway), and each group's counter
 * (groupBudgetWorkflow) lists its agents in visibility once per poll (30 s). Worker CPU is read
 * from /proc (the worker's process tree) over the measured window and divided by the turns
 * answered in it. stdout: exactly one JSON object; progress on stderr.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { WardenClient } from '../src/client/index.js';
import { groupStatus, setGroupBudget } from '../src/client/groups.js';
import { latencyStats, makeTurn, pool, round, sleep, startWorkerMain, waitReady, wholeArg, withServer } from './common.js';
import { readTreeCpuMs } from './proc-cpu.js';

interface Options {
  agents: number;
  groups: number;
  periodS: number;
  durationS: number;
  /** Rounds of both sides; odd rounds run `withGroups` first, so neither side always meets the fuller server. */
  rounds: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { agents: 200, groups: 20, periodS: 10, durationS: 60, rounds: 1 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--agents':
        o.agents = wholeArg('--agents', v, 1, 20_000);
        break;
      case '--groups':
        o.groups = wholeArg('--groups', v, 1, 1_000);
        break;
      case '--period':
        o.periodS = wholeArg('--period', v, 1, 3_600);
        break;
      case '--duration':
        o.durationS = wholeArg('--duration', v, 1, 3_600);
        break;
      case '--rounds':
        o.rounds = wholeArg('--rounds', v, 1, 20);
        break;
      default:
        throw new Error(`unknown flag ${argv[i]}`);
    }
    i++;
  }
  return o;
}

const say = (msg: string) => process.stderr.write(`[group-budget] ${msg}\n`);

interface Side {
  turns: number;
  failed: number;
  workerCpuMs: number;
  cpuMsPerTurn: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** withGroups: the turns' spend the counters had counted at the end, against what the agents spent. */
  counted?: { costUsd: number; spentUsd: number };
}

async function runSide(address: string, o: Options, withGroups: boolean, tag: string): Promise<Side> {
  const taskQueue = `warden-bench-${tag}`;
  const warden = await WardenClient.connect({ address, taskQueue });
  const worker = startWorkerMain(address, 'default', taskQueue, {}, { maxLogLine: 400 });
  try {
    await waitReady(worker);
    const ids = Array.from({ length: o.agents }, (_, i) => `${tag}-${i}`);
    const groupOf = (i: number) => `g${tag}-${i % o.groups}`;
    if (withGroups) for (let g = 0; g < o.groups; g++) await setGroupBudget(warden, `bench=g${tag}-${g}`, { costUsd: 1e9, per: 'day' });
    say(`${tag}: starting ${o.agents} agents${withGroups ? ` in ${o.groups} groups` : ''}`);
    await pool(ids, 32, (id, i) => warden.start({ agentId: id, task: 'bench', ...(withGroups && { labels: { bench: groupOf(i) } }) }));
    const seq = new Map<string, number>();
    let spentUsd = 0;
    const turn = (id: string, a: number) => {
      const t = (seq.get(id) ?? 0) + 1;
      seq.set(id, t);
      const body = makeTurn(`${id}-${t}`, a, t);
      spentUsd += body.costUsd ?? 0;
      return warden.reportTurn(id, body);
    };
    await pool(ids, 32, (id, a) => turn(id, a));
    say(`${tag}: warmed up; measuring ${o.durationS} s`);
    const pid = worker.child.pid!;
    const cpu0 = readTreeCpuMs([pid]) ?? 0;
    const started = Date.now();
    const end = started + o.durationS * 1000;
    const latencies: number[] = [];
    let failed = 0;
    const inFlight: Promise<void>[] = [];
    // Open loop: each agent's turns at its own offset in the period, sent on time whatever the replies.
    await Promise.all(
      ids.map(async (id, a) => {
        let at = started + Math.random() * o.periodS * 1000;
        while (at < end) {
          await sleep(Math.max(0, at - Date.now()));
          const scheduled = at;
          inFlight.push(
            turn(id, a).then(
              () => void latencies.push(Date.now() - scheduled),
              () => void (failed += 1),
            ),
          );
          at += o.periodS * 1000;
        }
      }),
    );
    await Promise.all(inFlight);
    const cpu = (readTreeCpuMs([pid]) ?? 0) - cpu0;
    let counted: Side['counted'];
    if (withGroups) {
      let costUsd = 0;
      for (let g = 0; g < o.groups; g++) costUsd += (await groupStatus(warden, `bench=g${tag}-${g}`)).spent.costUsd;
      counted = { costUsd: round(costUsd, 4), spentUsd: round(spentUsd, 4) };
    }
    return {
      turns: latencies.length,
      failed,
      workerCpuMs: Math.round(cpu),
      cpuMsPerTurn: round(cpu / Math.max(1, latencies.length), 3),
      latencyMs: latencyStats(latencies, 0),
      ...(counted && { counted }),
    };
  } finally {
    await worker.stop();
    await warden.close();
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const run = randomBytes(3).toString('hex');
  const loadBefore = loadavg().map((l) => round(l, 2));
  const rounds = await withServer(null, 'warden-bench-group-', say, async (address) => {
    const out: { plain: Side; groups: Side; ratio: number }[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const groupsFirst = r % 2 === 1;
      const a = await runSide(address, o, groupsFirst, `${groupsFirst ? 'g' : 'p'}${run}${r}`);
      const b = await runSide(address, o, !groupsFirst, `${groupsFirst ? 'p' : 'g'}${run}${r}`);
      const [plain, groups] = groupsFirst ? [b, a] : [a, b];
      out.push({ plain, groups, ratio: round(groups.cpuMsPerTurn / Math.max(1e-9, plain.cpuMsPerTurn), 3) });
      say(`round ${r + 1}: plain ${plain.cpuMsPerTurn} ms/turn, withGroups ${groups.cpuMsPerTurn} ms/turn, ratio ${out.at(-1)!.ratio}`);
    }
    return out;
  });
  const ratios = rounds.map((x) => x.ratio).sort((x, y) => x - y);
  const ratio = ratios.length % 2 ? ratios[(ratios.length - 1) / 2]! : round((ratios[ratios.length / 2 - 1]! + ratios[ratios.length / 2]!) / 2, 3);
  const first = rounds[0]!;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'group-budget',
      agents: o.agents,
      groups: o.groups,
      periodS: o.periodS,
      durationS: o.durationS,
      rounds: o.rounds,
      turnsPerSecond: round(o.agents / o.periodS, 1),
      cpus: cpus().length,
      loadavgBefore: loadBefore,
      loadavgAfter: loadavg().map((l) => round(l, 2)),
      plain: first.plain,
      withGroups: first.groups,
      ...(o.rounds > 1 && { perRound: rounds.map((x) => ({ plain: x.plain.cpuMsPerTurn, withGroups: x.groups.cpuMsPerTurn, ratio: x.ratio })) }),
      cpuPerTurnRatio: ratio,
      overheadPctPerTurn: round((ratio - 1) * 100, 1),
    })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
