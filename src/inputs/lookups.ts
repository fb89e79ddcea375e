import { z } from 'zod';
import { decodeGlobalId, NOT_A_GLOBAL_ID } from '../domain/global-ids.js';
import { freeText, INT32_MAX } from './common.js';

// The graph's lookups by key (docs/contract/decisions.md §6.1): `node`, `nodes`, `creator`,
// `channel`, `video`, `category` and the free `categories`. A key that exists nowhere is `null`,
// not an error; a malformed one (empty, too long, NUL) is a 400 naming the argument.

export const MAX_NODE_IDS = 100;

const key = freeText(256).min(1, 'is required');
/** A global id that decodes (src/domain/global-ids.ts): every bad item of a list named at once. */
const globalId = z
  .string()
  .min(1, 'is required')
  .max(512)
  .superRefine((id, ctx) => {
    // One issue an item: an empty or overlong id is already named above.
    if (id.length > 0 && id.length <= 512 && decodeGlobalId(id) === null) ctx.addIssue({ code: 'custom', message: NOT_A_GLOBAL_ID });
  });
const categoryId = z.int().positive().max(INT32_MAX);

export const nodeArgs = z.object({ id: globalId });
export const nodesArgs = z.object({
  ids: z.array(globalId).max(MAX_NODE_IDS, `at most ${MAX_NODE_IDS} ids`),
});
export const creatorLookupArgs = z.object({ userId: key.describe("The creator's user id on the microblog platform") });
export const channelLookupArgs = z.object({ channelId: key });
export const videoLookupArgs = z.object({ videoId: key });
// Any Int: no category has an id of 0 or below (a video without one says 0), so its lookup is null.
export const categoryLookupArgs = z.object({ categoryId: z.int().min(-INT32_MAX - 1).max(INT32_MAX) });
export const categoriesArgs = z.object({
  level: z.int().min(1).max(3).nullish().describe('Only categories of this level (1 to 3)'),
  parentId: categoryId.nullish().describe('Only the children of this category'),
});
