// PostGraphile v4 over the bench database, the comparison system of `npm run bench`: library mode
// with the connection-filter plugin (relations on) and @graphile/pg-aggregates (grouped counts,
// the comparison for facets), served by node:http. Plain JavaScript because
// its packages live only in bench/node_modules (installed by the bench), which the service's own
// typecheck must not need. Env: DATABASE_URL, PORT (0 = any free port), HOST; POOL_SIZE (default
// 10, the service's own pool size). Prints "listening on <url>" once the schema is built.
import { createServer } from 'node:http';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import ConnectionFilterPlugin from 'postgraphile-plugin-connection-filter';
// A CommonJS module whose plugin is its default export's `default`.
import PgAggregates from '@graphile/pg-aggregates';
const PgAggregatesPlugin = PgAggregates.default ?? PgAggregates;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
pool.on('error', () => {});

// PostGraphile's production recommendations, minus anything a read-only benchmark does not use.
const middleware = postgraphile(pool, 'public', {
  appendPlugins: [ConnectionFilterPlugin, PgAggregatesPlugin],
  graphileBuildOptions: { connectionFilterRelations: true },
  disableQueryLog: true,
  disableDefaultMutations: true,
  dynamicJson: true,
  setofFunctionsContainNulls: false,
  ignoreRBAC: false,
  legacyRelations: 'omit',
  graphiql: false,
  watchPg: false,
  retryOnInitFail: false,
  extendedErrors: ['errcode'],
});

await middleware.getGraphQLSchema();
const server = createServer(middleware);
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  process.stdout.write(`listening on http://${address}:${port}\n`);
});

const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
