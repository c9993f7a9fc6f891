/** JSON Schemas generated from the zod schemas (the input side: what a caller may send). */
import { z } from 'zod';
import { AgentSpecSchema, SIGNAL_SCHEMAS, TaskSpecSchema, TurnSchema } from './schemas.js';
import { AgentStatusSchema, ReportTurnResultSchema } from './output-schemas.js';
import { LinkRequestSchema } from './links.js';
import { RaiseBudgetSchema } from './budget-schemas.js';

export function jsonSchemas(): Record<string, unknown> {
  const gen = (schema: z.ZodType, title: string) => ({
    ...(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
    title,
  });
  const out: Record<string, unknown> = {
    'agent-spec': gen(AgentSpecSchema, 'AgentSpec (input of workflow type agentWorkflow)'),
    turn: gen(TurnSchema, 'Turn (argument of the reportTurn update)'),
    'task-spec': gen(TaskSpecSchema, 'TaskSpec (argument of the delegate update)'),
    'link-request': gen(LinkRequestSchema, 'LinkRequest (argument of the link update, sent by `warden serve` for a verified action link)'),
    'raise-budget': gen(RaiseBudgetSchema, 'RaiseBudget (argument of the raiseBudget update: new budget limits, and who sets them; `warden budget`)'),
  };
  for (const [name, schema] of Object.entries(SIGNAL_SCHEMAS)) out[`signal-${name}`] = gen(schema, `payload of the ${name} signal`);
  // The output side: what a caller receives.
  const genOut = (schema: z.ZodType, title: string) => ({
    ...(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>),
    title,
  });
  out['report-turn-reply'] = genOut(ReportTurnResultSchema, 'reply of the reportTurn update');
  out.status = genOut(AgentStatusSchema, 'answer of the status query');
  return out;
}
