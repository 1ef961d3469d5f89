import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ThrowawayPostgresDatabase {
  /** Connection URL of the new, empty database. */
  url: string;
  /** Ends every connection to it and drops it. Safe to call more than once. */
  drop(): Promise<void>;
}

/** True for `postgres://…` and `postgresql://…` URLs (e.g. to decide whether `TEST_DATABASE_URL` is set up). */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

/**
 * Creates an empty database `gw_test_<random>` on the server of `adminUrl` (a database the role may connect to,
 * with CREATEDB rights). Defaults to `TEST_DATABASE_URL` when that is a postgres URL, else the local trust setup.
 */
export async function createThrowawayPostgresDatabase(
  adminUrl: string = isPostgresUrl(process.env.TEST_DATABASE_URL) ? process.env.TEST_DATABASE_URL : DEFAULT_POSTGRES_ADMIN_URL,
): Promise<ThrowawayPostgresDatabase> {
  const name = `gw_test_${randomBytes(8).toString('hex')}`;
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE "${name}"`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;

  let dropped = false;
  return {
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient(adminUrl, async (client) => {
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await client.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    },
  };
}

async function withAdminClient(adminUrl: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
