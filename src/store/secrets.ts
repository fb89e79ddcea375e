import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';

/**
 * The named 256-bit secret of this database, made by the first process that asks for it: every
 * process sharing the database gets the same one (concurrent first asks included: one insert wins).
 */
export async function sharedSecret(db: Kysely<Database>, name: string): Promise<Buffer> {
  await db
    .insertInto('service_secrets')
    .values({ name, secret: randomBytes(32) })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('secret').where('name', '=', name).executeTakeFirstOrThrow();
  // pg answers a Buffer, PGlite a Uint8Array.
  return Buffer.from(row.secret);
}
