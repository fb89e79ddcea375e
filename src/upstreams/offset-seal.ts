import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The realtime `offset` handed to clients: the upstream's cursor with an HMAC over the account and
 * the cursor, `base64url(cursor) "." base64url(tag)`. Only offsets this service issued (for this
 * account) open, so a forged or borrowed one is refused before any upstream call or charge, and
 * the upstream never sees a cursor it did not make.
 */
export interface OffsetSeal {
  seal(userId: string, cursor: string): string;
  /** The cursor inside an offset issued for `userId`, or null when the offset is not one. */
  open(userId: string, offset: string): string | null;
}

/** 128 bits: forging one is out of reach, and offsets stay short. */
const TAG_BYTES = 16;

export function createOffsetSeal(secret: Buffer): OffsetSeal {
  function seal(userId: string, cursor: string): string {
    // NUL cannot occur in either part (user ids are digits; offsets are NUL-free text), so the
    // message is unambiguous.
    const tag = createHmac('sha256', secret).update(`realtime-offset\u0000${userId}\u0000${cursor}`).digest().subarray(0, TAG_BYTES);
    return `${Buffer.from(cursor, 'utf8').toString('base64url')}.${tag.toString('base64url')}`;
  }
  return {
    seal,
    open(userId, offset) {
      const dot = offset.indexOf('.');
      if (dot < 0) return null;
      const cursor = Buffer.from(offset.slice(0, dot), 'base64url').toString('utf8');
      // Compared whole with the offset we would issue: base64 decoding forgives stray characters
      // and unused bits, so only the canonical spelling is one we issued.
      const given = Buffer.from(offset, 'utf8');
      const expected = Buffer.from(seal(userId, cursor), 'utf8');
      return given.length === expected.length && timingSafeEqual(given, expected) ? cursor : null;
    },
  };
}
