/**
 * Invoice numbers are gap-free per series, on SQLite and (with TEST_DATABASE_URL) PostgreSQL: under concurrency in
 * one process (through two storage handles on PostgreSQL; SQLite's driver is synchronous, so in one process its
 * transactions queue on one handle), across two operating-system processes on one database, and when issuing
 * transactions roll back (a property test over random interleavings of commits and rollbacks).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { invoiceDraftFor } from '../support/invoice-issuer-process.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../support/postgres-test-database.js';
import { makeAccount } from './fixtures.js';

const run = promisify(execFile);
const ISSUER = path.resolve(import.meta.dirname, '../../dist/test/support/invoice-issuer-process.js');

function expectGapFree(sequences: number[], count: number): void {
  expect([...sequences].sort((left, right) => left - right)).toEqual(Array.from({ length: count }, (_, index) => index + 1));
}

let url: string;
let cleanup: () => Promise<void>;
let a: Storage;
let b: Storage;
let accountId: string;

beforeAll(async () => {
  if (isPostgresUrl(process.env.TEST_DATABASE_URL)) {
    const database = await createThrowawayPostgresDatabase();
    url = database.url;
    cleanup = database.drop;
  } else {
    const directory = await mkdtemp(join(tmpdir(), 'unigate-invoices-'));
    url = `sqlite:${join(directory, 'invoices.db')}`;
    cleanup = () => rm(directory, { recursive: true, force: true });
  }
  const secretBox = new SecretBox(randomBytes(32));
  a = await openStorage({ url, secretBox });
  // A second handle in this process only on PostgreSQL: a second SQLite connection here would block the event loop
  // in its busy wait while the first one's transaction needs that loop to finish.
  b = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await openStorage({ url, secretBox }) : a;
  const account = makeAccount();
  await a.accounts.create(account);
  accountId = account.id;
});

afterAll(async () => {
  await a?.close();
  if (b !== a) await b?.close();
  await cleanup?.();
});

describe('invoice numbering', () => {
  it('gives 60 concurrent issues the numbers 1..60, each once, per series', async () => {
    const issues = Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? a : b).invoices.issue(invoiceDraftFor(accountId, 'CONC', `conc:${index}`)));
    const other = Array.from({ length: 10 }, (_, index) => a.invoices.issue(invoiceDraftFor(accountId, 'CONC-CN', `conc-cn:${index}`)));
    const issued = await Promise.all([...issues, ...other]);
    expectGapFree(issued.filter((invoice) => invoice.series === 'CONC').map((invoice) => invoice.sequence), 60);
    expectGapFree(issued.filter((invoice) => invoice.series === 'CONC-CN').map((invoice) => invoice.sequence), 10);
    expect(new Set(issued.map((invoice) => invoice.number)).size).toBe(70);
    expect((await a.invoices.listSeries('CONC')).map((invoice) => invoice.number)).toEqual(Array.from({ length: 60 }, (_, index) => `CONC-${String(index + 1).padStart(6, '0')}`));
  });

  it('never reuses a source: the second invoice for the same payment is refused and takes no number', async () => {
    await a.invoices.issue(invoiceDraftFor(accountId, 'ONCE', 'stripe:cs_once'));
    await expect(b.invoices.issue(invoiceDraftFor(accountId, 'ONCE', 'stripe:cs_once'))).rejects.toThrow();
    const next = await b.invoices.issue(invoiceDraftFor(accountId, 'ONCE', 'stripe:cs_twice'));
    expect(next.sequence).toBe(2);
  });

  it('property: whatever mix of committed and rolled-back issues runs concurrently, the committed ones hold exactly 1..n', async () => {
    let round = 0;
    await fc.assert(fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), async (commits) => {
      round += 1;
      const series = `PROP${round}`;
      const outcomes = await Promise.allSettled(commits.map((commit, index) => (index % 2 === 0 ? a : b).payments.transact(async (trx) => {
        const invoice = await trx.issueInvoice(invoiceDraftFor(accountId, series, `prop:${round}:${index}`));
        if (!commit) throw new Error('roll back');
        return invoice.sequence;
      })));
      const committed = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      expectGapFree(committed, commits.filter(Boolean).length);
      expectGapFree((await a.invoices.listSeries(series)).map((invoice) => invoice.sequence), committed.length);
    }), { numRuns: 25 });
  }, 60_000);

  it('two operating-system processes issuing at once share one gap-free series', async () => {
    if (!existsSync(ISSUER)) throw new Error(`${ISSUER} is missing: build first (npx tsc -p tsconfig.build.json)`);
    const series = `PROC${newId('s').slice(-6).toUpperCase()}`;
    const [first, second] = await Promise.all([0, 1].map(() => run(process.execPath, [ISSUER, url, accountId, series, '40', '4'], { timeout: 120_000 })));
    const sequences = [first, second].flatMap((output) => (JSON.parse(output?.stdout.trim() ?? '{}') as { sequences: number[] }).sequences);
    expect(sequences).toHaveLength(80);
    expectGapFree(sequences, 80);
    expect((JSON.parse(first?.stdout ?? '{}') as { sequences: number[] }).sequences).toHaveLength(40);
    expectGapFree((await a.invoices.listSeries(series)).map((invoice) => invoice.sequence), 80);
  }, 120_000);
});
