/**
 * A table's rows as the database holds them, read past the gateway's repositories (SQLite or PostgreSQL, from the
 * gateway's own DATABASE_URL), as one JSON text: for tests that prove what is stored, such as secrets kept sealed.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';

export async function rawTableText(databaseUrl: string, table: string): Promise<string> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  if (databaseUrl.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return JSON.stringify((await client.query(`select * from ${table}`)).rows);
    } finally {
      await client.end();
    }
  }
  const database = new DatabaseSync(databaseUrl.replace(/^sqlite:/, ''), { readOnly: true });
  try {
    return JSON.stringify(database.prepare(`select * from ${table}`).all());
  } finally {
    database.close();
  }
}
