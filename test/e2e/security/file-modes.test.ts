/**
 * What the gateway keeps on disk is its owner's alone: a SQLite database it creates is 0600 (and so are its WAL and
 * shared-memory files, which take the database file's mode), the directories it makes for it are 0700, and the
 * generated secret key is 0600 — whatever the process's umask lets through.
 */
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

const mode = async (file: string): Promise<number> => (await stat(file)).mode & 0o777;

describe('files the gateway creates', () => {
  let gateway: TestGateway;
  let database: string;
  let dataDirectory: string;
  const umask = process.umask(0o002);

  beforeAll(async () => {
    const directory = path.join(process.env.TMPDIR ?? '/tmp', `unigate-modes-${process.pid}-${Date.now()}`);
    database = path.join(directory, 'nested', 'gateway.db');
    dataDirectory = path.join(directory, 'data');
    gateway = await startTestGateway({ database: 'sqlite', env: { DATABASE_URL: `sqlite:${database}`, DATA_DIR: dataDirectory } });
    // A write, so the WAL file exists.
    await seedAccount(gateway);
  });

  afterAll(async () => {
    process.umask(umask);
    await gateway?.close();
    await rm(path.dirname(dataDirectory), { recursive: true, force: true });
  });

  it('are readable by their owner only', async () => {
    expect((await mode(path.dirname(path.dirname(database)))).toString(8)).toBe('700');
    expect((await mode(path.dirname(database))).toString(8)).toBe('700');
    expect((await mode(database)).toString(8)).toBe('600');
    expect((await mode(`${database}-wal`)).toString(8)).toBe('600');
    expect((await mode(`${database}-shm`)).toString(8)).toBe('600');
    expect((await mode(dataDirectory)).toString(8)).toBe('700');
    expect((await mode(path.join(dataDirectory, 'secret.key'))).toString(8)).toBe('600');
    // The gateway answers from that database.
    expect((await gateway.admin('GET', '/admin/accounts')).status).toBe(200);
  });
});
