import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import {
  createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase,
} from '../support/postgres-test-database.js';
import { describeStorageContract } from './storage-contract.js';

const adminUrl = process.env.TEST_DATABASE_URL;

/** Raw `api_keys_sealed` values (plus names), read with a plain pg client, bypassing the repositories. */
async function readSealedColumn(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ name: string; api_keys_sealed: string }>('select name, api_keys_sealed from channels');
    return result.rows.map((row) => `${row.name}\n${row.api_keys_sealed}`).join('\n');
  } finally {
    await client.end();
  }
}

describe.skipIf(!isPostgresUrl(adminUrl))('PostgreSQL storage', () => {
  let database: ThrowawayPostgresDatabase | undefined;
  describeStorageContract(async () => {
    database = await createThrowawayPostgresDatabase(adminUrl);
    const url = database.url;
    return { url, readChannelSecretsAtRest: () => readSealedColumn(url) };
  }, async () => {
    await database?.drop();
  });
});

describe.skipIf(!isPostgresUrl(adminUrl))('PostgreSQL specifics', () => {
  it('accepts postgresql:// URLs and uses native bigint columns', async () => {
    const database = await createThrowawayPostgresDatabase(adminUrl);
    try {
      const url = database.url.replace(/^postgres:/, 'postgresql:');
      const storage = await openStorage({ url, secretBox: new SecretBox(randomBytes(32)) });
      try {
        expect(storage.dialect).toBe('postgres');
        expect(await storage.ping()).toBe(true);
      } finally {
        await storage.close();
      }
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const result = await client.query<{ data_type: string }>(
          "select data_type from information_schema.columns where table_name = 'accounts' and column_name = 'balance_nano'",
        );
        expect(result.rows[0]?.data_type).toBe('bigint');
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
    }
  });
});
