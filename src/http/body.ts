// A request body, for both doors (REST and GraphQL): whether it was sent in a form we read (media
// type, charset, content coding), and its text read with a byte limit. A body sent without a
// Content-Length (chunked) is read chunk by chunk and refused as soon as it passes the limit: it is
// never buffered whole. The rest of a refused body is read and dropped in the background rather
// than cancelled: cancelling destroys the socket, and the client would get a reset instead of the
// answer. (yoga's own limit piped every body through a stream transform, whose teardown made an
// AbortError with a stack trace on every request.)

import type { FieldError } from '../domain/errors.js';

/** The Content-Type's media type without its parameters, lowercase: media types are case-insensitive (RFC 9110 §8.3.1). */
export function mediaType(headers: Headers): string {
  return (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

/** The Content-Type's `charset` parameter, lowercase and unquoted, or null when it has none. */
function charset(headers: Headers): string | null {
  for (const parameter of (headers.get('content-type') ?? '').split(';').slice(1)) {
    const equals = parameter.indexOf('=');
    if (equals === -1) continue;
    if (parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    return parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return null;
}

/**
 * What keeps a body from being read as it was sent, one error per header at fault (none: it can
 * be). Bodies are read as they come, as UTF-8 (JSON's one encoding between systems, RFC 8259): no
 * content coding is decoded and no other charset, so such a body would otherwise pass for bad
 * JSON, or for other text.
 */
export function bodyEncodingErrors(headers: Headers): FieldError[] {
  const errors: FieldError[] = [];
  const codings = (headers.get('content-encoding') ?? '').split(',').map((coding) => coding.trim().toLowerCase());
  if (codings.some((coding) => coding !== '' && coding !== 'identity')) {
    errors.push({ field: 'Content-Encoding', message: 'must be identity (send the body uncompressed)' });
  }
  const declared = charset(headers);
  if (declared !== null && declared !== 'utf-8' && declared !== 'utf8') errors.push({ field: 'Content-Type', message: 'charset must be utf-8' });
  return errors;
}

/** The body as UTF-8 text, or null when it is larger than `maxBytes`. */
export async function readBodyText(request: Request, maxBytes: number): Promise<string | null> {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (Number(declared) > maxBytes) return null;
    // The HTTP parser delivers no more than a declared length: read it whole (the quick way).
    return request.text();
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void drop(reader);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

async function drop(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done);
  } catch {
    // The client went away: nothing left to drop.
  }
}
