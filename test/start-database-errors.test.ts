import { describe, expect, it } from 'vitest';
import { expectOneLineExit1, runToEnd, SECRET } from './support/command-exit.js';

// A database URL the server refuses for good (it does not exist, nor its role, nor TLS) ends any
// command at start with one line naming it without its password, and exit code 1: no wait or
// rerun helps. Settings that fail without any database: test/start-errors.unit.test.ts.

const postgres = process.env.TEST_DATABASE_URL;

/** TEST_DATABASE_URL's server with another database, and a password in the URL (trust auth ignores it). */
function serverUrl(database: string, change: (url: URL) => void = () => {}): { url: string; secret: string; printed: string } {
  const url = new URL(postgres!);
  url.pathname = `/${database}`;
  url.password ||= SECRET;
  change(url);
  const secret = decodeURIComponent(url.password);
  const printed = new URL(url);
  printed.password = '';
  return { url: url.href, secret, printed: printed.href };
}

describe.runIf(postgres)('a database the server refuses for good (TEST_DATABASE_URL)', { timeout: 60_000 }, () => {
  it.each([['serve'], ['start'], ['migrate'], ['seed', '--demo'], ['import', 'creators', '-'], ['keys', 'list'], ['usage']])(
    '%s: a database that does not exist is one line naming it without its password, and exit code 1',
    async (...args) => {
      const missing = serverUrl('missing_db_xyz');
      const line = expectOneLineExit1(await runToEnd(args, { DATABASE_URL: missing.url }), missing.secret);
      expect(line).toBe(`creator-data: cannot use the database at ${missing.printed}: database "missing_db_xyz" does not exist`);
    },
  );

  it('a role that does not exist, or TLS the server cannot give, is not waited for either', async () => {
    const noRole = serverUrl('postgres', (url) => (url.username = 'no_such_role_xyz'));
    const role = expectOneLineExit1(await runToEnd(['serve'], { DATABASE_URL: noRole.url }), noRole.secret);
    expect(role).toBe(`creator-data: cannot use the database at ${noRole.printed}: role "no_such_role_xyz" does not exist`);
    // Without TLS on the server pg says so; with it, the certificate is not one Node trusts: refused either way.
    const tls = serverUrl('postgres', (url) => url.searchParams.set('sslmode', 'verify-full'));
    const refused = expectOneLineExit1(await runToEnd(['serve'], { DATABASE_URL: tls.url }), tls.secret);
    expect(refused.startsWith(`creator-data: cannot use the database at ${tls.printed}: `), refused).toBe(true);
  });

  it('a read replica URL the server refuses ends serve too, naming that URL', async () => {
    const replica = serverUrl('missing_replica_xyz');
    const line = expectOneLineExit1(await runToEnd(['serve'], { DATABASE_URL: serverUrl('postgres').url, DATABASE_READ_URL: replica.url }), replica.secret);
    expect(line).toBe(`creator-data: cannot use the database at ${replica.printed}: database "missing_replica_xyz" does not exist`);
  });
});
