/**
 * SQLite's WAL checkpoints run on a worker thread with its own connection, not inside a commit on the event loop:
 * the gateway's connection has auto-checkpoint off, the worker still copies the log into the database file, a
 * failed worker hands checkpoints back to the connection, and closing the storage closes the worker's connection
 * (the last connection then checkpoints and removes the log). The worker runs only while the log needs it: it starts
 * once the log reaches a size, and ends after emptying it when nothing new came.
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
    const checkpointer = startWalCheckpointer(file, database, { intervalMs: 50, startAtBytes: 1_000_000 });
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

  it('starts no worker while the log is below its start size, and one that ends after emptying the idle log', async () => {
    const file = await scratchFile();
    const database = openSqliteConnection(file);
    database.exec('pragma journal_mode = WAL');
    database.exec('create table filler (id integer primary key, text text)');
    database.exec('pragma wal_checkpoint(TRUNCATE)');
    const checkpointer = startWalCheckpointer(file, database, { intervalMs: 50, startAtBytes: 1_000_000, idleCheckpoints: 4 });
    try {
      const before = statSync(file).size;
      fill(database, 200);
      // Well below the start size: ten intervals later nothing has been copied into the database file.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(statSync(file).size).toBe(before);
      fill(database, 5000);
      expect(await until(() => statSync(file).size > before + 1_000_000, 5000)).toBe(true);
      // With nothing new to copy the worker empties the log and ends; the connection still does not checkpoint.
      expect(await until(() => statSync(`${file}-wal`).size === 0, 5000)).toBe(true);
      expect(pragmaValue(database, 'wal_autocheckpoint')).toBe(0n);
      // The log growing past the start size again starts another worker.
      const second = statSync(file).size;
      fill(database, 8000);
      expect(await until(() => statSync(file).size > second + 1_000_000, 5000)).toBe(true);
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
    const checkpointer = startWalCheckpointer(`${file}.missing`, database, { intervalMs: 50, startAtBytes: 0 });
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
