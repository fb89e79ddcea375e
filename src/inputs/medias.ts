import { z } from 'zod';
import { freeText } from './common.js';

// Realtime media list (contract §4.4, docs/contract/decisions.md §2). The same schema checks the GraphQL
// arguments and, in snake_case, the REST query parameters (`user_id`, `offset`).

export const realtimeMediasArgs = z.strictObject({
  // The photo platform's account ids are digits; a username or anything else is a malformed
  // parameter (400, before any charge) rather than an upstream lookup.
  userId: z
    .string()
    .min(1, 'is required')
    .max(32)
    .regex(/^\d+$/, "must be the account's numeric id on the platform")
    .describe("The creator's numeric account id on the platform"),
  offset: freeText(1024)
    .nullish()
    .describe('A previous offset: the next page; empty or absent for the newest posts'),
});
export type RealtimeMediasArgs = z.infer<typeof realtimeMediasArgs>;
