/** Shared set-up of the payments tests: a gateway with the fake Stripe, the console money routes, and the ledger check. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import { actorHeader } from '../../support/console-test-auth.js';
import { ensureDebianPackage } from '../../support/debian-package.js';
import type { TestGateway } from '../../support/gateway-harness.js';
import { admin, call, type HttpAnswer } from '../admin/helpers.js';

const run = promisify(execFile);

export function consoleCall<T = Record<string, unknown>>(url: string, actor: ConsoleActorIdentity, method: string, route: string, body?: unknown): Promise<HttpAnswer<T>> {
  return call<T>(url, method, route, { headers: actorHeader(actor), ...(body === undefined ? {} : { body }) });
}

/** The ledger check of the whole instance must pass: balances equal their entries, nothing counted twice. */
export async function expectLedgerBalanced(gateway: TestGateway): Promise<void> {
  const check = await admin<{ ok: boolean; problems: unknown[] }>(gateway, 'GET', '/admin/ledger/check');
  expect(check.status, check.text).toBe(200);
  expect(check.body.problems).toEqual([]);
  expect(check.body.ok).toBe(true);
}

export async function balanceOf(gateway: TestGateway, accountId: string): Promise<number> {
  const account = await admin<{ balance_usd: number }>(gateway, 'GET', `/admin/accounts/${accountId}`);
  expect(account.status, account.text).toBe(200);
  return account.body.balance_usd;
}

export async function ledgerOf(gateway: TestGateway, accountId: string): Promise<Array<{ id: string; kind: string; amount_usd: number; reason: string | null }>> {
  const ledger = await admin<{ data: Array<{ id: string; kind: string; amount_usd: number; reason: string | null }> }>(gateway, 'GET', `/admin/accounts/${accountId}/ledger?limit=200`);
  expect(ledger.status, ledger.text).toBe(200);
  return ledger.body.data;
}

/** The text of a PDF through poppler's pdftotext (Debian's poppler-utils, installed when missing and we may). */
export async function pdfText(pdf: Buffer, directory: string): Promise<string> {
  if (!ensureDebianPackage('/usr/bin/pdftotext', 'poppler-utils', 'invoice tests')) {
    throw new Error('pdftotext is missing: install it with `sudo apt-get install -y poppler-utils` and run the tests again.');
  }
  const { writeFile } = await import('node:fs/promises');
  const path = `${directory}/invoice-${Date.now()}-${Math.random().toString(36).slice(2)}.pdf`;
  await writeFile(path, pdf);
  const { stdout } = await run('pdftotext', ['-layout', path, '-'], { timeout: 15_000 });
  return stdout;
}

export async function newAccount(gateway: TestGateway, email: string): Promise<string> {
  const account = await admin<{ id: string }>(gateway, 'POST', '/admin/accounts', { email });
  expect(account.status, account.text).toBe(201);
  return account.body.id;
}
