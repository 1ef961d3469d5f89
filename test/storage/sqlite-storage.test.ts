import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteConnection, pragmaValue } from '../../src/storage/sqlite-connection.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { describeStorageContract } from './storage-contract.js';

const directories: string[] = [];

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-storage-'));
  directories.push(directory);
  return directory;
}

afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

/** The database file and its WAL: recent pages may live only in the WAL until a checkpoint. */
async function readDatabaseFiles(path: string): Promise<string> {
  const parts = await Promise.all([path, `${path}-wal`].map((file) => (existsSync(file) ? readFile(file) : Buffer.alloc(0))));
  return Buffer.concat(parts).toString('latin1');
}

describe('SQLite storage', () => {
  let path = '';
  describeStorageContract(async () => {
    path = join(await temporaryDirectory(), 'gateway.db');
    return { url: `sqlite:${path}`, readChannelSecretsAtRest: () => readDatabaseFiles(path) };
  }, async () => {});
});

describe('SQLite specifics', () => {
  const secretBox = new SecretBox(randomBytes(32));

  it('creates parent directories and sets the pragmas', async () => {
    const path = join(await temporaryDirectory(), 'nested', 'deeper', 'gateway.db');
    const storage = await openStorage({ url: `sqlite:${path}`, secretBox });
    await storage.close();
    expect(existsSync(path)).toBe(true);
    const database = openSqliteConnection(path, { readOnly: true, mustExist: true });
    try {
      expect(pragmaValue(database, 'journal_mode')).toBe('wal');
      const tables = database.prepare("select name from sqlite_master where type = 'table' order by name").all().map((row) => row.name);
      expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'channels', 'ledger_entries', 'usage_logs']));
    } finally {
      database.close();
    }
  });

  it('opens an in-memory database', async () => {
    const storage = await openStorage({ url: 'sqlite::memory:', secretBox });
    try {
      expect(storage.dialect).toBe('sqlite');
      expect(await storage.ping()).toBe(true);
      expect(await storage.settings.get('x')).toBeNull();
    } finally {
      await storage.close();
    }
  });

  it('rejects unknown URL schemes and an empty path', async () => {
    await expect(openStorage({ url: 'mysql://root@localhost/db', secretBox })).rejects.toThrow(/Unsupported storage URL scheme "mysql:"/);
    await expect(openStorage({ url: './gateway.db', secretBox })).rejects.toThrow(/expected sqlite:<path> or postgres/);
    await expect(openStorage({ url: 'sqlite:', secretBox })).rejects.toThrow(/needs a file path/);
  });

  it('cannot read channel keys with a different secret box', async () => {
    const path = join(await temporaryDirectory(), 'gateway.db');
    const storage = await openStorage({ url: `sqlite:${path}`, secretBox });
    await storage.channels.create({
      id: 'chan_1', name: 'one', type: 'simulator', baseUrl: null, apiKeys: ['sk-secret'], models: {}, priority: 0,
      weight: 1, enabled: true, headers: {}, settings: {}, createdAt: 1, updatedAt: 1,
    });
    await storage.close();
    const wrong = await openStorage({ url: `sqlite:${path}`, secretBox: new SecretBox(randomBytes(32)) });
    try {
      await expect(wrong.channels.getById('chan_1')).rejects.toThrow();
    } finally {
      await wrong.close();
    }
  });
});
