/**
 * SQLite's WAL checkpoints run on a worker thread with its own connection, not inside a commit on the event loop:
 * the gateway's connection has auto-checkpoint off, the worker still copies the log into the database file, a
 * failed worker hands checkpoints back to the connection, and closing the storage closes the worker's connection
 * (the last connection then checkpoints and removes the log).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { immediateTransaction, openSqliteConnection, pragmaValue, type SqliteConnection } from '../../src/storage/sqlite-connection.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { startWalCheckpointer } from '../../src/storage/wal-checkpointer.js';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function scratchFile(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-wal-'));
  directories.push(directory);
  return path.join(directory, 'gateway.db');
}

function fill(database: SqliteConnection, rows: number): void {
  const insert = database.prepare('insert into filler (text) values (?)');
  immediateTransaction(database, () => {
    for (let index = 0; index < rows; index += 1) insert.run(randomBytes(200).toString('hex'));
  });
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return condition();
}

describe('WAL checkpoints on a worker thread', () => {
  it('copies the log into the database file while the connection never checkpoints itself', async () => {
    const file = await scratchFile();
    const database = openSqliteConnection(file);
    database.exec('pragma journal_mode = WAL');
    database.exec('create table filler (id integer primary key, text text)');
    database.exec('pragma wal_checkpoint(TRUNCATE)');
    const checkpointer = startWalCheckpointer(file, database, 50);
    try {
      expect(pragmaValue(database, 'wal_autocheckpoint')).toBe(0n);
      const before = statSync(file).size;
      fill(database, 5000);
      // Only a checkpoint writes pages to the database file itself.
      expect(statSync(file).size).toBe(before);
      expect(await until(() => statSync(file).size > before + 1_000_000, 5000)).toBe(true);
    } finally {
      await checkpointer.stop();
      database.close();
    }
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('hands checkpoints back to the connection when the worker fails', async () => {
    const file = await scratchFile();
    const database = openSqliteConnection(file);
    database.exec('pragma journal_mode = WAL');
    // The worker cannot open a file that does not exist.
    const checkpointer = startWalCheckpointer(`${file}.missing`, database, 50);
    try {
      expect(await until(() => pragmaValue(database, 'wal_autocheckpoint') === 1000n, 5000)).toBe(true);
    } finally {
      await checkpointer.stop();
      database.close();
    }
  });

  it('is stopped with the storage, leaving no log behind', async () => {
    const file = await scratchFile();
    const storage = await openStorage({ url: `sqlite:${file}`, secretBox: new SecretBox(randomBytes(32)) });
    expect(await storage.ping()).toBe(true);
    await storage.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });
});
