/** An action link's request, as `warden serve` sends it to the agent's `link` update after verifying the link (what the agent does with it: src/domain/agent/links.ts). */
import { z } from 'zod';
import { MAX_WHISPER_TEXT } from './limits.js';

export const LinkRequestSchema = z
  .object({
    action: z.enum(['resume', 'abort', 'dismiss', 'steer', 'pause']),
    tokenId: z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'tokenId: 22 base64url characters'),
    expiresAt: z.number().int().positive(),
    text: z.string().min(1).max(MAX_WHISPER_TEXT).optional(),
    /** The escalation the link was issued for (its number); 0: a link of another alert (awaiting-input). */
    escalation: z.number().int().min(0).optional(),
    /** The id of that escalation's finding (findingId), for an escalation's link. */
    finding: z
      .string()
      .regex(/^[0-9a-f]{16}$/, 'finding: 16 hex characters')
      .optional(),
  })
  .strict()
  .refine((r) => r.action !== 'steer' || r.text !== undefined, { message: 'text: steering needs text', path: ['text'] });
export type LinkRequest = z.output<typeof LinkRequestSchema>;
