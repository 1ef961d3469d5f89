/**
 * Erasing an account on PostgreSQL takes its row lock before its keys', the order every money transaction takes
 * them in (accounts, then keys, `lockInIdOrder`), so an erase beside a settlement of the same account waits for it
 * instead of one of the two being aborted as a deadlock.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { makeAccount, makeApiKey } from './fixtures.js';

const adminUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!isPostgresUrl(adminUrl))('erasing an account beside a money transaction (PostgreSQL)', () => {
  let database: ThrowawayPostgresDatabase | undefined;
  let storage: Storage;

  beforeAll(async () => {
    database = await createThrowawayPostgresDatabase(adminUrl);
    storage = await openStorage({ url: database.url, secretBox: new SecretBox(randomBytes(32)) });
  });

  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  it('waits for the transaction holding the account and then erases it, neither aborted', async () => {
    const account = makeAccount();
    await storage.accounts.create(account);
    const key = makeApiKey(account.id);
    await storage.keys.create(key);

    // A money transaction as a settlement batch takes its locks: the account first, then (below) its key.
    const money = new pg.Client({ connectionString: database?.url });
    await money.connect();
    try {
      await money.query('begin');
      await money.query(`set local deadlock_timeout = '100ms'`);
      await money.query('select id from accounts where id = $1 for no key update', [account.id]);

      const erasing = storage.accounts.erase(account.id, Date.now());
      const erased = erasing.then((value) => ({ value }), (error: unknown) => ({ error }));
      // The erase reaches its first lock while the money transaction holds the account.
      await new Promise((resolve) => setTimeout(resolve, 300));

      // With the key locked first by the erase, this would wait on it while the erase waits on the account: a deadlock.
      await money.query('select id from api_keys where id = $1 for no key update', [key.id]);
      await money.query('commit');

      const outcome = await erased;
      expect(outcome).not.toHaveProperty('error');
      expect((outcome as { value: { status: string } | null }).value?.status).toBe('deleted');
      expect((await storage.keys.getById(key.id))?.status).toBe('revoked');
    } finally {
      await money.end();
    }
  });
});
