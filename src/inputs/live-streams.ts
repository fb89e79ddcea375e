import { z } from 'zod';
import { checkConnectionArgs, cursor, cursorArgsShape, DEFAULT_PAGE_SIZE, freeText, MAX_PAGE_SIZE } from './common.js';

// Live-stream search (contract §4.3, docs/contract/decisions.md §2), camelCase; the REST body uses the same names
// in snake_case. An empty string does not filter, as an empty creator `query` does not.

const filterText = freeText(128);

export const liveStreamTypeSchema = z
  .enum(['ALL', 'LIVE'])
  .describe('ALL (the default) or LIVE: only streams the platform marks "live" (it sends "" for a few)');
export type LiveStreamTypeFilter = z.infer<typeof liveStreamTypeSchema>;

export const liveStreamFilterShape = {
  userId: filterText.nullish().describe("The streamer's user id"),
  userLogin: filterText.nullish().describe("The streamer's login, matched case-insensitively"),
  gameId: filterText.nullish().describe('Game (category) id'),
  type: liveStreamTypeSchema.nullish(),
  // The platform's own codes: ISO 639-1, or "other".
  language: z
    .string()
    .regex(/^([A-Za-z]{2}|[Oo][Tt][Hh][Ee][Rr])?$/, 'must be an ISO 639-1 language code (or "other")')
    .nullish()
    .describe('Broadcast language, ISO 639-1 (case-insensitive) or "other"'),
};

export const liveStreamFilter = z.strictObject(liveStreamFilterShape);
export type LiveStreamFilter = z.infer<typeof liveStreamFilter>;

function oneCursor(value: { after?: string | null; before?: string | null }, ctx: z.RefinementCtx): void {
  if (value.after != null && value.before != null) {
    ctx.addIssue({ code: 'custom', path: ['before'], message: 'cannot be combined with after; page one way at a time' });
  }
}

// The REST body of POST /api/v1/twitch/search/live, before its wire codecs (src/rest/codecs.ts).
// `first` is the page size in both directions: with `before` it counts back from the cursor.
export const liveStreamSearchBody = z
  .strictObject({
    ...liveStreamFilterShape,
    first: z.int().min(1).max(MAX_PAGE_SIZE).nullish().describe(`Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`),
    after: cursor.nullish().describe('A previous data.offset: the next page'),
    before: cursor.nullish().describe('A cursor: the page just before it, in the same order'),
  })
  .superRefine(oneCursor);

// The GraphQL `liveStreams` field's arguments: Relay connection arguments, no offset window.
export const liveStreamsArgs = z
  .object({ filter: liveStreamFilter.nullish(), ...cursorArgsShape })
  .superRefine((value, ctx) => {
    checkConnectionArgs(value, ctx);
    oneCursor(value, ctx);
  });
export type LiveStreamsArgs = z.infer<typeof liveStreamsArgs>;
