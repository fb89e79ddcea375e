import { z } from 'zod';
import { INT32_MAX, parseInstant } from './common.js';

// Options of a new key's account: the CLI's `keys create` flags and the admin mutation's input.
export const newKeyOptions = z.strictObject({
  plan: z.string().min(1).optional().describe('Plan id (trial or pro); default trial'),
  quota: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe("The account's quota allowance in units; default the plan's"),
  // Burst is twice the rate, and both are integer columns.
  rate: z.int().min(1).max(Math.floor(INT32_MAX / 2)).optional().describe('Requests per second for the account (burst twice that); default the plan\'s'),
  expires: z
    .string()
    .refine((text) => parseInstant(text) !== null, 'must be an ISO 8601 date or date-time')
    .optional()
    .describe('Subscription end (ISO 8601)'),
  account: z.string().min(1).optional().describe('Add the key to this existing account instead of a new one'),
}).superRefine((options, context) => {
  // They set up the new account; an existing one keeps its own (the admin mutation ignored them).
  if (options.account === undefined) return;
  for (const field of ['plan', 'quota', 'rate', 'expires'] as const) {
    if (options[field] !== undefined) context.addIssue({ code: 'custom', path: [field], message: 'sets up a new account, so it cannot go with account' });
  }
});
export type NewKeyOptions = z.infer<typeof newKeyOptions>;
