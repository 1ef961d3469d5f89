/**
 * The console's storage on SQLite and (with TEST_DATABASE_URL) PostgreSQL, through two storage handles on one
 * database (two gateway instances): a TOTP step, a backup code and a single-use token are each accepted once even
 * when claimed concurrently; the TOTP secret is sealed at rest; sessions end per user; playground keys are left out
 * of key lists on request; daily usage totals group by UTC day and model.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { ConsoleSession, ConsoleUser } from '../../src/storage/repositories/console-repository.js';
import type { Storage } from '../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { makeAccount, makeApiKey, makeUsageLog } from './fixtures.js';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;

function describeConsoleStorage(name: string, openUrl: () => Promise<{ url: string; cleanup: () => Promise<void> }>): void {
  describe(name, () => {
    let a: Storage;
    let b: Storage;
    let cleanup: () => Promise<void> = async () => {};
    let url = '';

    beforeAll(async () => {
      const opened = await openUrl();
      cleanup = opened.cleanup;
      url = opened.url;
      const secretBox = new SecretBox(randomBytes(32));
      a = await openStorage({ url: opened.url, secretBox });
      b = await openStorage({ url: opened.url, secretBox });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await cleanup();
    });

    async function newUser(): Promise<{ user: ConsoleUser; accountId: string }> {
      const account = makeAccount();
      await a.accounts.create(account);
      const user: ConsoleUser = {
        id: newId('usr', NOW), email: `${newId('u')}@example.com`, passwordHash: '$argon2id$x', emailVerifiedAt: null,
        totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: NOW, updatedAt: NOW,
      };
      await a.console.createUser(user, { accountId: account.id, userId: user.id, role: 'owner', createdAt: NOW });
      return { user, accountId: account.id };
    }

    function session(userId: string, accountId: string): ConsoleSession {
      return {
        id: newId('sess', NOW), tokenHash: randomBytes(32).toString('hex'), userId, accountId, csrfToken: 'c', ip: '10.0.0.1', userAgent: 'ua',
        createdAt: NOW, lastSeenAt: NOW, expiresAt: NOW + DAY,
      };
    }

    it('keeps the TOTP secret sealed and reads it back opened', async () => {
      const { user } = await newUser();
      await a.console.enableTotp(user.id, 'JBSWY3DPEHPK3PXP', 100, ['h1', 'h2'], NOW);
      const read = await b.console.getUserById(user.id);
      expect(read).toMatchObject({ totpSecret: 'JBSWY3DPEHPK3PXP', totpLastStep: 100, totpPendingSecret: null });
      expect(await b.console.countUnusedBackupCodes(user.id)).toBe(2);
      // Sealed with the secret key: another key cannot open it.
      const otherKey = await openStorage({ url, secretBox: new SecretBox(randomBytes(32)) });
      try {
        await expect(otherKey.console.getUserById(user.id)).rejects.toThrow();
      } finally {
        await otherKey.close();
      }
    });

    it('accepts a TOTP step once, and never an earlier one, under concurrent claims', async () => {
      const { user } = await newUser();
      await a.console.enableTotp(user.id, 'JBSWY3DPEHPK3PXP', 100, [], NOW);
      const claims = await Promise.all([a, b, a, b].map((storage) => storage.console.claimTotpStep(user.id, 101)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await a.console.claimTotpStep(user.id, 100)).toBe(false);
      expect(await a.console.claimTotpStep(user.id, 102)).toBe(true);
    });

    it('uses a backup code once under concurrent use, and replacing the codes drops the old ones', async () => {
      const { user } = await newUser();
      await a.console.replaceBackupCodes(user.id, ['one', 'two'], NOW);
      const uses = await Promise.all([a, b, a, b].map((storage) => storage.console.useBackupCode(user.id, 'one', NOW)));
      expect(uses.filter(Boolean)).toHaveLength(1);
      await a.console.replaceBackupCodes(user.id, ['three'], NOW);
      expect(await a.console.useBackupCode(user.id, 'two', NOW)).toBe(false);
      expect(await a.console.useBackupCode(user.id, 'three', NOW)).toBe(true);
    });

    it('consumes a single-use token once, of its kind, before its expiry', async () => {
      const { user } = await newUser();
      await a.console.createToken({ tokenHash: 'tok-1', kind: 'password-reset', userId: user.id, expiresAt: NOW + 1000, createdAt: NOW });
      expect(await a.console.consumeToken('tok-1', 'verify-email', NOW)).toBeNull();
      const consumed = await Promise.all([a, b, a, b].map((storage) => storage.console.consumeToken('tok-1', 'password-reset', NOW)));
      expect(consumed.filter((userId) => userId === user.id)).toHaveLength(1);
      await a.console.createToken({ tokenHash: 'tok-2', kind: 'password-reset', userId: user.id, expiresAt: NOW + 1000, createdAt: NOW });
      expect(await a.console.consumeToken('tok-2', 'password-reset', NOW + 1000)).toBeNull();
      expect(await a.console.peekToken('tok-2', 'password-reset', NOW)).toBe(user.id);
      await a.console.retireTokens(user.id, 'password-reset', NOW);
      expect(await a.console.peekToken('tok-2', 'password-reset', NOW)).toBeNull();
    });

    it('ends one session of a user only, or all but one', async () => {
      const first = await newUser();
      const second = await newUser();
      const [s1, s2, s3] = [session(first.user.id, first.accountId), session(first.user.id, first.accountId), session(first.user.id, first.accountId)];
      const other = session(second.user.id, second.accountId);
      for (const item of [s1, s2, s3, other]) await a.console.createSession(item as ConsoleSession);
      expect(await a.console.deleteUserSession(second.user.id, s1?.id ?? '')).toBe(false);
      expect(await a.console.deleteUserSession(first.user.id, s1?.id ?? '')).toBe(true);
      await a.console.deleteUserSessions(first.user.id, s2?.id ?? null);
      expect((await b.console.listSessions(first.user.id, NOW)).map((item) => item.id)).toEqual([s2?.id]);
      expect(await b.console.getSessionByTokenHash(other.tokenHash)).toMatchObject({ id: other.id, accountId: second.accountId });
    });

    it('leaves playground keys out of key lists when asked', async () => {
      const account = makeAccount();
      await a.accounts.create(account);
      const normal = makeApiKey(account.id, { environment: 'production', createdBy: 'usr_1' });
      const playground = makeApiKey(account.id, { playground: true });
      await a.keys.create(normal);
      await a.keys.create(playground);
      const all = await a.keys.listByAccount(account.id, { limit: 10, after: null });
      expect(all.data.map((key) => key.id).sort()).toEqual([normal.id, playground.id].sort());
      const shown = await a.keys.listByAccount(account.id, { limit: 10, after: null }, { playground: false });
      expect(shown.data).toEqual([normal]);
      expect(await a.keys.update(normal.id, { environment: 'staging' }, NOW)).toMatchObject({ environment: 'staging', createdBy: 'usr_1', playground: false });
    });

    it('remembers the announcements each user dismissed, once, and forgets them with the announcement', async () => {
      const { user } = await newUser();
      const other = await newUser();
      const announcement = { id: newId('ann', NOW), title: 'Maintenance', body: 'Sunday', level: 'info' as const, publishedAt: NOW, expiresAt: null, createdAt: NOW };
      const second = { ...announcement, id: newId('ann', NOW + 1) };
      await a.announcements.create(announcement);
      await a.announcements.create(second);
      expect(await b.announcements.dismissedBy(user.id, [announcement.id, second.id])).toEqual(new Set());
      await a.announcements.dismiss(user.id, announcement.id, NOW);
      await b.announcements.dismiss(user.id, announcement.id, NOW + 5);
      expect(await b.announcements.dismissedBy(user.id, [announcement.id, second.id])).toEqual(new Set([announcement.id]));
      expect(await b.announcements.dismissedBy(other.user.id, [announcement.id, second.id])).toEqual(new Set());
      expect(await b.announcements.dismissedBy(user.id, [])).toEqual(new Set());
      expect(await a.announcements.delete(announcement.id)).toBe(true);
      expect(await b.announcements.dismissedBy(user.id, [announcement.id])).toEqual(new Set());
    });

    it('sums usage per UTC day and model, for one account and range', async () => {
      const account = makeAccount();
      const stranger = makeAccount();
      await a.accounts.create(account);
      await a.accounts.create(stranger);
      const day0 = Math.floor(NOW / DAY) * DAY;
      await a.usage.insertBatch([
        makeUsageLog({ accountId: account.id, model: 'm1', status: 200, promptTokens: 10, completionTokens: 5, costNano: 100n, createdAt: day0 + 1 }),
        makeUsageLog({ accountId: account.id, model: 'm1', status: 500, promptTokens: 3, completionTokens: 0, costNano: 0n, createdAt: day0 + DAY - 1 }),
        makeUsageLog({ accountId: account.id, model: 'm2', status: 200, promptTokens: 7, completionTokens: 1, costNano: 50n, createdAt: day0 + 2 }),
        makeUsageLog({ accountId: account.id, model: 'm1', status: 429, promptTokens: 0, completionTokens: 0, costNano: 0n, createdAt: day0 + DAY + 5 }),
        makeUsageLog({ accountId: stranger.id, model: 'm1', status: 200, promptTokens: 99, completionTokens: 99, costNano: 999n, createdAt: day0 + 3 }),
        makeUsageLog({ accountId: account.id, model: 'm1', status: 200, promptTokens: 1, completionTokens: 1, costNano: 1n, createdAt: day0 + 3 * DAY }),
        makeUsageLog({ accountId: account.id, keyId: 'key_second', model: 'm1', status: 200, promptTokens: 4, completionTokens: 2, costNano: 30n, createdAt: day0 + 4 }),
      ]);
      const totals = await b.usage.dailyTotals({ accountId: account.id, from: day0, to: day0 + 2 * DAY });
      expect(totals).toEqual([
        // Per key too: spend reports sum these per key, per model or per day.
        { day: day0, model: 'm1', keyId: null, requests: 2, errors: 1, inputTokens: 13, outputTokens: 5, costNano: 100n },
        { day: day0, model: 'm1', keyId: 'key_second', requests: 1, errors: 0, inputTokens: 4, outputTokens: 2, costNano: 30n },
        { day: day0, model: 'm2', keyId: null, requests: 1, errors: 0, inputTokens: 7, outputTokens: 1, costNano: 50n },
        { day: day0 + DAY, model: 'm1', keyId: null, requests: 1, errors: 1, inputTokens: 0, outputTokens: 0, costNano: 0n },
      ]);
    });
  });
}

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeConsoleStorage('SQLite: console storage', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-console-'));
  directories.push(directory);
  return { url: `sqlite:${join(directory, 'gateway.db')}`, cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeConsoleStorage('PostgreSQL: console storage', async () => {
    const database: ThrowawayPostgresDatabase = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, cleanup: () => database.drop() };
  });
}
