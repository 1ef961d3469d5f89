/**
 * Operator storage on SQLite and (with TEST_DATABASE_URL) PostgreSQL: an operator disabled and enabled keeps their
 * role and grant (a later grant changes only the role); accounts searched by email, id or billing-name prefix, case
 * ignored, LIKE's wildcards literal, paged by id.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { makeAccount } from './fixtures.js';

const NOW = 1_800_000_000_000;
const directories: string[] = [];

function describeOperatorStorage(name: string, openUrl: () => Promise<{ url: string; cleanup: () => Promise<void> }>): void {
  describe(name, () => {
    let storage: Storage;
    let cleanup: () => Promise<void> = async () => {};

    beforeAll(async () => {
      const opened = await openUrl();
      cleanup = opened.cleanup;
      storage = await openStorage({ url: opened.url, secretBox: new SecretBox(randomBytes(32)) });
    });

    afterAll(async () => {
      await storage?.close();
      await cleanup();
    });

    it('disables and enables an operator; a later grant keeps them disabled and changes only the role', async () => {
      const account = makeAccount();
      await storage.accounts.create(account);
      const userId = newId('usr', NOW);
      await storage.console.createUser({
        id: userId, email: `${userId}@example.com`, passwordHash: '$argon2id$x', emailVerifiedAt: null,
        totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: NOW, updatedAt: NOW,
      }, { accountId: account.id, userId, role: 'owner', createdAt: NOW });
      await storage.operators.upsert({ userId, role: 'admin', createdAt: NOW, createdBy: null });
      expect(await storage.operators.get(userId)).toEqual({ userId, role: 'admin', createdAt: NOW, createdBy: null, disabledAt: null, disabledBy: null });

      expect(await storage.operators.setDisabled(userId, { at: NOW + 1, by: 'usr_owner' })).toBe(true);
      await storage.operators.upsert({ userId, role: 'viewer', createdAt: NOW + 2, createdBy: 'usr_other' });
      expect(await storage.operators.get(userId)).toEqual({ userId, role: 'viewer', createdAt: NOW, createdBy: null, disabledAt: NOW + 1, disabledBy: 'usr_owner' });
      expect((await storage.operators.list()).find((operator) => operator.userId === userId)?.disabledAt).toBe(NOW + 1);

      expect(await storage.operators.setDisabled(userId, null)).toBe(true);
      expect(await storage.operators.get(userId)).toMatchObject({ disabledAt: null, disabledBy: null });
      expect(await storage.operators.setDisabled('usr_nobody', null)).toBe(false);
    });

    it('searches accounts by email, id or billing-name prefix, case ignored, wildcards literal, paged by id', async () => {
      const marker = `m${randomBytes(4).toString('hex')}`;
      const accounts = [
        makeAccount({ email: `${marker}.one@example.com` }),
        makeAccount({ email: `${marker}.two@example.com` }),
        makeAccount({ email: `${marker}_three@example.com` }),
        makeAccount({ email: `other-${marker}@example.com` }),
      ];
      for (const account of accounts) await storage.accounts.create(account);
      await storage.billingProfiles.put({ accountId: accounts[3]!.id, name: `${marker.toUpperCase()} Trading`, address: 'Main Street 1', country: 'DE', taxId: null, email: null, updatedAt: NOW });

      const ids = async (text: string, limit = 50): Promise<string[]> => (await storage.accounts.search(text, { limit, after: null })).data.map((account) => account.id);
      const sorted = (list: string[]): string[] => [...list].sort();
      expect(await ids(marker.toUpperCase())).toEqual(sorted(accounts.map((account) => account.id)));
      expect(await ids(`${marker}.`)).toEqual(sorted([accounts[0]!.id, accounts[1]!.id]));
      // `_` is a literal underscore, not any one character.
      expect(await ids(`${marker}_`)).toEqual([accounts[2]!.id]);
      expect(await ids(`${marker}%`)).toEqual([]);
      expect(await ids(`${marker} trad`)).toEqual([accounts[3]!.id]);
      expect(await ids(accounts[1]!.id)).toEqual([accounts[1]!.id]);
      expect(await ids(marker.slice(1))).toEqual([]);

      const first = await storage.accounts.search(marker, { limit: 3, after: null });
      expect(first.data).toHaveLength(3);
      expect(first.nextCursor).not.toBeNull();
      const second = await storage.accounts.search(marker, { limit: 3, after: first.nextCursor });
      expect([...first.data, ...second.data].map((account) => account.id)).toEqual(sorted(accounts.map((account) => account.id)));
      expect(second.nextCursor).toBeNull();
    });
  });
}

afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeOperatorStorage('SQLite: operator storage', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-operator-'));
  directories.push(directory);
  return { url: `sqlite:${join(directory, 'gateway.db')}`, cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeOperatorStorage('PostgreSQL: operator storage', async () => {
    const database: ThrowawayPostgresDatabase = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, cleanup: () => database.drop() };
  });
}
