// Every setting the service reads from its environment (decisions.md §7), read in one place.
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  instagramUpstreamUrl: string | undefined;
  upstreamTimeoutMs: number;
  twitch: { apiUrl: string; clientId: string; token: string } | undefined;
  adminToken: string | undefined;
  statementTimeoutMs: number;
  maxBodyBytes: number;
}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a non-negative integer`);
  return parsed;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nonEmpty = (value: string | undefined) => (value && value.trim() !== '' ? value : undefined);
  const twitchUrl = nonEmpty(env.TWITCH_API_URL);
  return {
    port: integer('PORT', env.PORT, 8080),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: nonEmpty(env.DATA_DIR) ?? './.data',
    redisUrl: nonEmpty(env.REDIS_URL),
    instagramUpstreamUrl: nonEmpty(env.INSTAGRAM_UPSTREAM_URL),
    upstreamTimeoutMs: integer('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS, 10_000),
    twitch: twitchUrl
      ? { apiUrl: twitchUrl, clientId: env.TWITCH_CLIENT_ID ?? '', token: env.TWITCH_TOKEN ?? '' }
      : undefined,
    adminToken: nonEmpty(env.ADMIN_TOKEN),
    statementTimeoutMs: integer('STATEMENT_TIMEOUT_MS', env.STATEMENT_TIMEOUT_MS, 15_000),
    maxBodyBytes: integer('MAX_BODY_BYTES', env.MAX_BODY_BYTES, 64 * 1024),
  };
}
