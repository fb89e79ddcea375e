import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../domain/errors.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * `Authorization: Admin <token>` against ADMIN_TOKEN. Comparing fixed-length digests in constant
 * time leaks neither the token nor its length.
 */
export function assertAdmin(authorization: string | null, adminToken: string | undefined): void {
  const presented = authorization?.startsWith('Admin ') ? authorization.slice('Admin '.length) : null;
  if (!adminToken || presented === null || !timingSafeEqual(digest(presented), digest(adminToken))) {
    throw new ApiError('UNAUTHENTICATED', 'Unauthorized: admin operations need Authorization: Admin <token>');
  }
}

/** Root fields that make an operation administrative; the public schema does not have them. */
export const isAdminField = (name: string) => name.startsWith('admin');
