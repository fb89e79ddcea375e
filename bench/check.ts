// Before anything is timed: the first sessions of each workload run on every system (or variant),
// one page at a time, and every page must agree with the reference's: the same total, the same ids
// in the same order, and (for cursor sessions) the same answer to "is there a next page", and the
// same nested answers and facets (PageResult.detail).
import type { SystemClient } from './clients.js';
import { fetchPage, runSession, type HttpClient } from './load.js';
import type { PageResult, Session } from './specs.js';

export interface Target {
  client: SystemClient;
  http: HttpClient;
  /** Statements the system has sent to PostgreSQL so far (BENCH_COUNT_STATEMENTS=1), else absent. */
  statements?: () => number;
}

export interface Mismatch {
  sessionIndex: number;
  session: Session;
  /** 1-based page of the session. */
  page: number;
  detail: string;
  /** The request the departing target got for that page: a reproduction. */
  request: { name: string; text: string | null } | null;
}

export interface CheckOutcome {
  sessions: number;
  pages: number;
  mismatches: Mismatch[];
  /** Statements each counted system sent for each page it answered, in order (pages run one at a time). */
  statements: Record<string, number[]>;
}

type Pages = PageResult[] | { error: string };

async function pagesOf(target: Target, session: Session, statements: number[] | undefined): Promise<Pages> {
  const pages: PageResult[] = [];
  try {
    await runSession(
      session,
      async (step, cursor) => {
        const before = target.statements?.();
        const page = await fetchPage(target.http, target.client, session, step, cursor);
        if (before !== undefined) statements?.push(target.statements!() - before);
        return page;
      },
      (_step, result) => pages.push(result) > 0,
    );
    return pages;
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const summary = (page: PageResult | undefined) =>
  page ? `total ${page.total ?? '–'}, ${page.ids.length} ids [${page.ids.slice(0, 3).join(', ')}${page.ids.length > 3 ? ', …' : ''}], next page: ${page.next !== null}` : 'no such page';

/** Where two canonical JSON texts part, with some context on each side. */
function firstTextDifference(reference: string, other: string): string {
  let at = 0;
  while (at < reference.length && reference[at] === other[at]) at++;
  const around = (text: string) => text.slice(Math.max(0, at - 60), at + 60);
  return `…${around(other)}… instead of …${around(reference)}…`;
}

/** The first page where `other` departs from `reference`, described; null when they agree. */
function firstDifference(reference: PageResult[], other: PageResult[]): { page: number; detail: string } | null {
  for (let i = 0; i < Math.max(reference.length, other.length); i++) {
    const a = reference[i];
    const b = other[i];
    if (!a || !b) return { page: i + 1, detail: `session ended after ${Math.min(reference.length, other.length)} pages on one side` };
    if (a.total !== b.total) return { page: i + 1, detail: `total ${b.total} instead of ${a.total}` };
    const at = a.ids.findIndex((id, k) => id !== b.ids[k]);
    if (at !== -1 || a.ids.length !== b.ids.length) {
      const k = at === -1 ? Math.min(a.ids.length, b.ids.length) : at;
      return { page: i + 1, detail: `ids differ from position ${k + 1}: ${b.ids[k] ?? '(none)'} instead of ${a.ids[k] ?? '(none)'}` };
    }
    if ((a.next === null) !== (b.next === null)) return { page: i + 1, detail: `next page ${b.next !== null} instead of ${a.next !== null}` };
    if (a.detail !== b.detail) return { page: i + 1, detail: `nested answers or facets differ: ${firstTextDifference(a.detail ?? '', b.detail ?? '')}` };
  }
  return null;
}

/** The request `target` got for page `page` (1-based) of its session, rebuilt from the cursor it followed. */
function requestOf(target: Target, session: Session, pages: Pages, page: number): string | null {
  if (!Array.isArray(pages)) return null;
  const cursor = page > 1 ? (pages[page - 2]?.next ?? null) : null;
  const call = target.client.request(session, page - 1, cursor);
  return `POST ${call.path} ${call.body}`;
}

/**
 * Compares the first `samples` sessions of a sequence across the targets (at most `samples × 10`
 * pages, so a 100-page walk is checked whole but not twenty times): every target against
 * `reference` (the floor in `npm run bench`, the first variant in `bench:compare`). Without the
 * reference among the targets (the service alone) nothing is compared, but a failure still counts.
 */
export async function checkSessions(
  targets: Record<string, Target>,
  reference: string,
  sessionAt: (index: number) => Session,
  samples: number,
): Promise<CheckOutcome> {
  const names = Object.keys(targets);
  const outcome: CheckOutcome = { sessions: 0, pages: 0, mismatches: [], statements: {} };
  for (const name of names) if (targets[name].statements) outcome.statements[name] = [];
  for (let index = 0; index < samples && outcome.pages < samples * 10; index++) {
    const session = sessionAt(index);
    const results: Record<string, Pages> = {};
    for (const name of names) results[name] = await pagesOf(targets[name], session, outcome.statements[name]);
    outcome.sessions++;
    const expected = results[reference];
    if (expected === undefined) {
      for (const name of names) {
        const pages = results[name];
        if (Array.isArray(pages)) outcome.pages += pages.length;
        else outcome.mismatches.push({ sessionIndex: index, session, page: 1, detail: `${name} failed: ${pages.error}`, request: null });
      }
      continue;
    }
    if (!Array.isArray(expected)) {
      outcome.mismatches.push({ sessionIndex: index, session, page: 1, detail: `${reference} failed: ${expected.error}`, request: null });
      continue;
    }
    outcome.pages += expected.length;
    for (const name of names) {
      if (name === reference) continue;
      const pages = results[name];
      const difference = Array.isArray(pages) ? firstDifference(expected, pages) : { page: 1, detail: `failed: ${pages.error}` };
      if (!difference) continue;
      outcome.mismatches.push({
        sessionIndex: index,
        session,
        page: difference.page,
        detail: `${name}: ${difference.detail}; page ${difference.page}: ${reference} ${summary(expected[difference.page - 1])}; ${name} ${summary(Array.isArray(pages) ? pages[difference.page - 1] : undefined)}`,
        request: { name, text: requestOf(targets[name], session, pages, difference.page) },
      });
    }
  }
  return outcome;
}

/** Each mismatch on stderr with its session and the request that reproduces it. */
export function reportMismatches(workloadId: string, outcome: CheckOutcome): void {
  for (const m of outcome.mismatches) {
    process.stderr.write(
      `MISMATCH ${workloadId} session ${m.sessionIndex} page ${m.page}: ${m.detail}\n` +
        `  session: ${JSON.stringify(m.session)}\n` +
        (m.request?.text ? `  ${m.request.name} request: ${m.request.text}\n` : ''),
    );
  }
}
