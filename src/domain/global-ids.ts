import { ApiError } from './errors.js';

// Relay's global object ids (docs/contract/decisions.md §6.1): `Node.id` is the base64url of
// `<TypeName>:<key>`, opaque to clients. Keys: Creator `<platform>:<userId>`, Channel
// `<channelId>`, Video `<videoId>`, Media `<platform>:<mediaId>`, Category `<categoryId>`.

export const nodeTypes = ['Creator', 'Channel', 'Video', 'Media', 'Category'] as const;
export type NodeType = (typeof nodeTypes)[number];

/** What a global id names: the type, and the key as the store reads it. */
export type NodeKey =
  | { type: 'Creator'; platform: string; userId: string }
  | { type: 'Channel'; channelId: string }
  | { type: 'Video'; videoId: string }
  | { type: 'Media'; platform: string; mediaId: string }
  | { type: 'Category'; categoryId: number };

/** Longer ids are refused before decoding: no key of ours comes near it. */
const MAX_ID_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const CATEGORY_ID = /^[1-9]\d{0,9}$/;

export function encodeGlobalId(key: NodeKey): string {
  return Buffer.from(`${key.type}:${keyText(key)}`, 'utf8').toString('base64url');
}

function keyText(key: NodeKey): string {
  switch (key.type) {
    case 'Creator':
      return `${key.platform}:${key.userId}`;
    case 'Channel':
      return key.channelId;
    case 'Video':
      return key.videoId;
    case 'Media':
      return `${key.platform}:${key.mediaId}`;
    case 'Category':
      return String(key.categoryId);
  }
}

/** The key a global id names, or null when it is not one we issue (any type, any shape). */
export function decodeGlobalId(id: string): NodeKey | null {
  if (id.length === 0 || id.length > MAX_ID_LENGTH || !BASE64URL.test(id)) return null;
  const text = Buffer.from(id, 'base64url').toString('utf8');
  // Not canonical (stray bits, padding-like tails): another spelling of some id, not one we issued.
  if (Buffer.from(text, 'utf8').toString('base64url') !== id || text.includes('\u0000')) return null;
  const colon = text.indexOf(':');
  if (colon === -1) return null;
  const type = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  const split = () => {
    const at = rest.indexOf(':');
    return at > 0 && at < rest.length - 1 ? [rest.slice(0, at), rest.slice(at + 1)] : null;
  };
  switch (type) {
    case 'Creator': {
      const parts = split();
      return parts ? { type, platform: parts[0], userId: parts[1] } : null;
    }
    case 'Media': {
      const parts = split();
      return parts ? { type, platform: parts[0], mediaId: parts[1] } : null;
    }
    case 'Channel':
      return rest ? { type, channelId: rest } : null;
    case 'Video':
      return rest ? { type, videoId: rest } : null;
    case 'Category':
      return CATEGORY_ID.test(rest) && Number(rest) <= 2_147_483_647 ? { type, categoryId: Number(rest) } : null;
    default:
      return null;
  }
}

export const NOT_A_GLOBAL_ID = 'is not a global id issued by this service';

/** decodeGlobalId, or the 400 naming the argument (`id`). */
export function parseGlobalId(id: string, field: string): NodeKey {
  const key = decodeGlobalId(id);
  if (!key) throw ApiError.badRequest([{ field, message: NOT_A_GLOBAL_ID }]);
  return key;
}

/** Each id decoded, or one 400 naming every bad item as zod names items (`ids.3`). */
export function parseGlobalIds(ids: readonly string[], field: string): NodeKey[] {
  const keys = ids.map(decodeGlobalId);
  const bad = keys.flatMap((key, i) => (key ? [] : [{ field: `${field}.${i}`, message: NOT_A_GLOBAL_ID }]));
  if (bad.length > 0) throw ApiError.badRequest(bad);
  return keys as NodeKey[];
}
