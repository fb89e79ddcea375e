import { z } from 'zod';
import { decodeGlobalId, type NodeKey, NOT_A_GLOBAL_ID } from '../domain/global-ids.js';
import { CREATOR_PLATFORM, PHOTO_PLATFORM } from '../domain/records.js';
import { freeText, INT32_MAX } from './common.js';

// The graph's lookups by key (docs/contract/decisions.md §6.1): `node`, `nodes`, `creator`,
// `channel`, `video`, `category` and the free `categories`. A key that exists nowhere is `null`,
// not an error; a malformed one (empty, too long, NUL) is a 400 naming the argument.

export const MAX_NODE_IDS = 100;

const MAX_KEY_LENGTH = 256;
const lookupKey = freeText(MAX_KEY_LENGTH).min(1, 'is required');
/**
 * `lookupKey`'s rule for a key decoded from a global id, which decoding already freed of NUL: the
 * length alone, without a zod parse per id (a `nodes` of 100 ids ran 100 of them, a tenth of its CPU).
 */
const isKeyText = (key: string) => key.length >= 1 && key.length <= MAX_KEY_LENGTH;
const categoryId = z.int().positive().max(INT32_MAX);

export const creatorLookupArgs = z.object({ userId: lookupKey.describe("The creator's user id on the microblog platform") });
export const channelLookupArgs = z.object({ channelId: lookupKey });
export const videoLookupArgs = z.object({ videoId: lookupKey });
// Any Int: no category has an id of 0 or below (a video without one says 0), so its lookup is null.
export const categoryLookupArgs = z.object({ categoryId: z.int().min(-INT32_MAX - 1).max(INT32_MAX) });
export const categoriesArgs = z.object({
  level: z.int().min(1).max(3).nullish().describe('Only categories of this level (1 to 3)'),
  parentId: categoryId.nullish().describe('Only the children of this category'),
});

/**
 * Whether a decoded global id's key is one the type's lookup argument accepts, on a platform the
 * graph serves (creator search's, and the photo platform's posts and their authors): any other
 * is not an id we issue, and is refused as the lookup would refuse it, not looked up for null.
 */
function isLookupKey(key: NodeKey): boolean {
  switch (key.type) {
    case 'Creator':
      return (key.platform === CREATOR_PLATFORM || key.platform === PHOTO_PLATFORM) && isKeyText(key.userId);
    case 'Channel':
      return isKeyText(key.channelId);
    case 'Video':
      return isKeyText(key.videoId);
    case 'Media':
      // No lookup of its own: a post's key is a key as the others are.
      return key.platform === PHOTO_PLATFORM && isKeyText(key.mediaId);
    case 'Category':
      return categoryLookupArgs.shape.categoryId.safeParse(key.categoryId).success;
  }
}

/** A global id that decodes (src/domain/global-ids.ts) to a key of the right shape: every bad item of a list named at once. */
const globalId = z
  .string()
  .min(1, 'is required')
  .max(512)
  .superRefine((id, ctx) => {
    // One issue an item: an empty or overlong id is already named above.
    if (id.length === 0 || id.length > 512) return;
    const decoded = decodeGlobalId(id);
    if (decoded === null || !isLookupKey(decoded)) ctx.addIssue({ code: 'custom', message: NOT_A_GLOBAL_ID });
  });

export const nodeArgs = z.object({ id: globalId });
export const nodesArgs = z.object({
  ids: z.array(globalId).max(MAX_NODE_IDS, `must hold at most ${MAX_NODE_IDS} ids`),
});
