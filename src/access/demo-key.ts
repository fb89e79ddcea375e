import type { Kysely } from 'kysely';
import { createAccount, issueKey, rotateKey } from '../store/accounts.js';
import type { Database } from '../store/database.js';

const DEMO_ACCOUNT = 'acct_demo';
const DEMO_KEY = 'key_demo';

/**
 * The key `npm start` prints. Keys are stored only as hashes, so a restart cannot show the old
 * one again: it rotates the demo key instead, and the printed key always works.
 */
export async function ensureDemoKey(db: Kysely<Database>): Promise<string> {
  const rotated = await rotateKey(db, DEMO_KEY);
  if (rotated) return rotated.key;
  const account = await db.selectFrom('accounts').select('id').where('id', '=', DEMO_ACCOUNT).executeTakeFirst();
  if (!account) await createAccount(db, { plan: 'pro', id: DEMO_ACCOUNT });
  return (await issueKey(db, DEMO_ACCOUNT, DEMO_KEY)).key;
}
