import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Search } from '../search/types.js';
import type { Store } from '../store/connect.js';
import type { BreakerState } from '../upstreams/circuit-breaker.js';
import type { UpstreamName } from '../upstreams/errors.js';

// Prometheus metrics of one app: its own registry, so two apps in one process (tests) do not
// share counters. Labels stay bounded: the endpoint is a route id, never a raw path or an account.

export type UpstreamOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'cancelled';

export interface Metrics {
  registry: Registry;
  /** One finished HTTP request. */
  request(endpoint: string, status: number, seconds: number): void;
  charged(endpoint: string, units: number): void;
  upstreamCall(upstream: UpstreamName, outcome: UpstreamOutcome, seconds: number): void;
  /** What to read at scrape time: the pool and the breakers. */
  watch(sources: { store?: Store; breakers?: Partial<Record<UpstreamName, () => BreakerState>>; search?: Search }): void;
}

const BREAKER_VALUES: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'http_requests_total', help: 'Requests answered, by endpoint and status', labelNames: ['endpoint', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response, by endpoint',
    labelNames: ['endpoint'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const units = new Counter({ name: 'quota_units_charged_total', help: 'Quota units kept (charged) for successful calls', labelNames: ['endpoint'], registers: [registry] });
  const upstreamCalls = new Counter({
    name: 'upstream_requests_total',
    help: 'Calls to upstream platforms, by outcome',
    labelNames: ['upstream', 'outcome'],
    registers: [registry],
  });
  const upstreamDuration = new Histogram({
    name: 'upstream_request_duration_seconds',
    help: 'Time of upstream calls',
    labelNames: ['upstream'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  let sources: Parameters<Metrics['watch']>[0] = {};
  new Gauge({
    name: 'upstream_breaker_state',
    help: 'Circuit breaker state per upstream: 0 closed, 1 half-open, 2 open',
    labelNames: ['upstream'],
    registers: [registry],
    collect() {
      for (const [upstream, state] of Object.entries(sources.breakers ?? {})) this.set({ upstream }, BREAKER_VALUES[state!()]);
    },
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'PostgreSQL pool: connections open, idle, and requests waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = sources.store?.poolStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  new Gauge({
    name: 'search_index_rows',
    help: 'Rows in the in-memory search index, per table (absent while a table loads)',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      const stats = sources.search?.stats();
      if (!stats) return;
      for (const table of ['creators', 'videos', 'channels', 'liveStreams'] as const) {
        const rows = stats[table];
        if (rows !== null) this.set({ table }, rows);
      }
    },
  });
  new Gauge({
    name: 'search_index_lag_seconds',
    help: 'Seconds since the search index last read the change feed',
    registers: [registry],
    collect() {
      const lag = sources.search?.stats().lagMs;
      if (lag != null) this.set(lag / 1000);
    },
  });
  return {
    registry,
    request(endpoint, status, seconds) {
      requests.inc({ endpoint, status: String(status) });
      duration.observe({ endpoint }, seconds);
    },
    charged(endpoint, amount) {
      if (amount > 0) units.inc({ endpoint }, amount);
    },
    upstreamCall(upstream, outcome, seconds) {
      upstreamCalls.inc({ upstream, outcome });
      upstreamDuration.observe({ upstream }, seconds);
    },
    watch(next) {
      sources = { ...sources, ...next };
    },
  };
}
