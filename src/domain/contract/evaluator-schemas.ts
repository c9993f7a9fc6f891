/**
 * The evaluator part of the AgentSpec (`AgentSpec.evaluator`): heuristic, the model evaluators
 * (codex, claude, openai, command) and `tiered` (the heuristic on every window, a model evaluator only where
 * it pays: src/domain/judgement/tiered.ts). Re-exported by schemas.ts.
 */
import { z } from 'zod';

/** The evaluators that ask a model: `codex`, `claude`, `openai`, `command` (also the model tier of `tiered`). */
export const ModelEvaluatorConfigSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('codex'),
      /** Path of the codex binary; default: `codex` on PATH, else the project's own. */
      codexPath: z.string().optional(),
      /** Extra `-c key=value` overrides passed to `codex exec` (e.g. a model provider). */
      config: z.array(z.string()).default([]),
      /** CODEX_HOME whose credentials are copied into each throwaway home; default $CODEX_HOME or ~/.codex. */
      credentialsHome: z.string().optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('claude'),
      /** Path of the Claude Code binary; default: `claude` on PATH. */
      claudePath: z.string().min(1, 'claudePath must not be empty').optional(),
      /** Model passed to `claude -p --model`; default: haiku (not the supervisor's `model`, which names an OpenAI model by default). */
      model: z.string().min(1, 'model must not be empty').optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('openai'),
      /** An OpenAI-compatible chat-completions server: OpenAI, vLLM, Ollama, llama.cpp … e.g. http://127.0.0.1:11434/v1 */
      baseUrl: z.url({ protocol: /^https?$/ }),
      /** Model name sent to the server; default: the supervisor's `model`. */
      model: z.string().min(1).optional(),
      /** Name of the environment variable (on the worker) holding the API key; none for keyless servers. */
      apiKeyEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
        .optional(),
      temperature: z.number().min(0).max(2).default(0),
    })
    .strict(),
  z
    .object({
      kind: z.literal('command'),
      /** argv: the program and its arguments. It reads the prompt on stdin and prints the answer: one JSON object (src/domain/judgement/verdict.ts). */
      command: z.array(z.string()).min(1, 'command needs at least the program'),
      cwd: z.string().optional(),
    })
    .strict(),
]);
export type ModelEvaluatorConfig = z.output<typeof ModelEvaluatorConfigSchema>;

/** Default fraction of the heuristic's OK windows that `tiered` sends to its model anyway. */
export const DEFAULT_SAMPLE_OK = 0.05;

export const EvaluatorConfigSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('heuristic') }).strict(),
  ...ModelEvaluatorConfigSchema.options,
  z
    .object({
      kind: z.literal('tiered'),
      /** The model tier: asked only where the heuristic flags, is unsure, or the OK window is sampled (src/domain/judgement/tiered.ts). */
      model: ModelEvaluatorConfigSchema,
      /** Fraction (0..1) of the heuristic's OK windows sent to the model anyway, chosen by a hash of agent id and turn numbers. */
      sampleOk: z.number().min(0, 'sampleOk is a fraction from 0 to 1').max(1, 'sampleOk is a fraction from 0 to 1').default(DEFAULT_SAMPLE_OK),
    })
    .strict(),
]);
export type EvaluatorConfig = z.output<typeof EvaluatorConfigSchema>;
