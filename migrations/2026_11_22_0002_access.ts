import { sql, type Kysely } from 'kysely';

// Accounts, plans and keys (decisions.md §4). Keys are stored only as a SHA-256 hash: they are
// 192-bit random values, so a slow password hash would add latency and no safety.
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoints', sql`text[]`, (c) => c.notNull())
    .addColumn('quota_units', 'bigint', (c) => c.notNull())
    .addColumn('rate_per_second', 'integer', (c) => c.notNull())
    .addColumn('burst', 'integer', (c) => c.notNull())
    .addColumn('max_in_flight', 'integer', (c) => c.notNull())
    .execute();
  await db
    .insertInto('plans')
    .values([
      {
        id: 'trial',
        endpoints: sql`ARRAY['search.creators','search.videos','live.search','ping']::text[]`,
        quota_units: 10_000,
        rate_per_second: 5,
        burst: 10,
        max_in_flight: 4,
      },
      {
        id: 'pro',
        endpoints: sql`ARRAY['search.creators','search.videos','live.search','realtime.medias','ping']::text[]`,
        quota_units: 10_000_000,
        rate_per_second: 50,
        burst: 100,
        max_in_flight: 16,
      },
    ])
    .execute();

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id'))
    .addColumn('quota_allowance', 'bigint', (c) => c.notNull())
    // The CHECKs make overspending impossible even for a statement that forgot its guard.
    .addColumn('quota_used', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`quota_used >= 0`))
    .addColumn('rate_per_second', 'integer')
    .addColumn('subscription_ends_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('accounts_quota_not_overspent', sql`quota_used <= quota_allowance`)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status IN ('active', 'disabled', 'deleted')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('rotated_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('accounts').execute();
  await db.schema.dropTable('plans').execute();
}
