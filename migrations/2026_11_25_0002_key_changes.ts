import { sql, type Kysely } from 'kysely';

// Every change to api_keys is announced on the `api_key_changes` channel, whoever writes it (the
// CLI, the admin operations, psql): server processes LISTEN and drop the key from their key cache
// at once, rather than honouring a disabled, rotated or deleted key until the cache expires.
// The payload is the base64 of the key's hash, old and new when a rotation changes it; '' after a
// TRUNCATE, meaning "all of them". NOTIFY is sent at commit, so a listener never sees a change
// that was rolled back, nor one before it is visible. An INSERT is not announced: a new key is
// random, so no process can have been refused it before (and every announcement costs each
// process a lookup of that key).
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION api_keys_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('api_key_changes', '');
        RETURN NULL;
      END IF;
      PERFORM pg_notify('api_key_changes', encode(OLD.key_hash, 'base64'));
      IF TG_OP = 'UPDATE' AND NEW.key_hash IS DISTINCT FROM OLD.key_hash THEN
        PERFORM pg_notify('api_key_changes', encode(NEW.key_hash, 'base64'));
      END IF;
      RETURN NULL;
    END
    $$
  `.execute(db);
  await sql`CREATE TRIGGER api_keys_notify_change AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION api_keys_notify_change()`.execute(db);
  await sql`CREATE TRIGGER api_keys_notify_truncate AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS api_keys_notify_truncate ON api_keys`.execute(db);
  await sql`DROP TRIGGER IF EXISTS api_keys_notify_change ON api_keys`.execute(db);
  await sql`DROP FUNCTION IF EXISTS api_keys_notify_change()`.execute(db);
}
