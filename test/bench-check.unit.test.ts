import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSessions, type Target } from '../bench/check.js';
import type { SystemClient } from '../bench/clients.js';
import { HttpClient } from '../bench/load.js';
import type { Session } from '../bench/specs.js';

// The equivalence check both bench runners make before timing (bench/check.ts): `npm run bench`
// against the floor, `bench:compare` against its first variant. Real HTTP servers answer pages
// of a live-stream session (cursor paged); one of them departs on its second page.

const session: Session = { kind: 'live', filter: {}, pageSize: 2, pages: 3 };
const pages = [
  { ids: ['a', 'b'], next: 'p2' },
  { ids: ['c', 'd'], next: 'p3' },
  { ids: ['e'], next: null },
];

function pageServer(departAt: number | null): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { cursor } = JSON.parse(body) as { cursor: string | null };
      const at = cursor === null ? 0 : Number(cursor.slice(1)) - 1;
      const page = at === departAt ? { ...pages[at], ids: [...pages[at].ids].reverse() } : pages[at];
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ total: 5, ...page }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const client: SystemClient = {
  name: 'service',
  headers: {},
  request: (_session, step, cursor) => ({ path: '/page', body: JSON.stringify({ step, cursor }) }),
  parse: (_session, body) => body as never,
};

const servers: Server[] = [];
const https: HttpClient[] = [];
async function target(departAt: number | null): Promise<Target> {
  const server = await pageServer(departAt);
  servers.push(server);
  const http = new HttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 2);
  https.push(http);
  return { client, http };
}

let same: Target;
let alsoSame: Target;
let departing: Target;
beforeAll(async () => {
  [same, alsoSame, departing] = await Promise.all([target(null), target(null), target(1)]);
});
afterAll(async () => {
  for (const http of https) http.close();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('checkSessions', () => {
  it('passes targets that answer every page as the reference does', async () => {
    const outcome = await checkSessions({ base: same, head: alsoSame }, 'base', () => session, 2);
    expect(outcome).toMatchObject({ sessions: 2, pages: 6, mismatches: [] });
  });

  it('names the departing target, the page, what differs and the request that shows it', async () => {
    const outcome = await checkSessions({ base: same, head: alsoSame, other: departing }, 'base', () => session, 1);
    expect(outcome.mismatches).toHaveLength(1);
    const [mismatch] = outcome.mismatches;
    expect(mismatch.page).toBe(2);
    expect(mismatch.detail).toMatch(/^other: ids differ from position 1: d instead of c; page 2: base total 5/);
    expect(mismatch.request).toEqual({ name: 'other', text: `POST /page ${JSON.stringify({ step: 1, cursor: 'p2' })}` });
  });

  it('without the reference among the targets, counts pages and failures only', async () => {
    const outcome = await checkSessions({ service: departing }, 'floor', () => session, 1);
    expect(outcome).toMatchObject({ sessions: 1, pages: 3, mismatches: [] });
  });
});
