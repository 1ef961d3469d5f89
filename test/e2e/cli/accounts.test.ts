/**
 * `unigate accounts disable|enable|delete` run as the real command against the database of a running gateway: the
 * gateway applies each change within its key cache's second, and every command is safe to repeat.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, chat, sleep } from '../admin/helpers.js';
import { assertBuilt, cleanEnv, runCommand } from './cli-process.js';

const MODEL = 'cli-accounts-model';
let gateway: TestGateway;

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL);
});

afterAll(async () => {
  await gateway?.close();
});

function unigate(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCommand(args, gateway.dataDirectory, cleanEnv({ DATABASE_URL: gateway.databaseUrl, DATA_DIR: gateway.dataDirectory }));
}

/** The status a chat call gets once the gateway's key cache has caught up (at most a second or two). */
async function statusWithin(key: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5000;
  let status = (await chat(gateway, key, MODEL)).status;
  while (status !== expected && Date.now() < deadline) {
    await sleep(100);
    status = (await chat(gateway, key, MODEL)).status;
  }
  return status;
}

it('disables, enables and deletes an account by email or id, each safe to repeat', async () => {
  const email = `cli-${Date.now()}@example.com`;
  const { accountId, key } = await seedAccount(gateway, { email });
  expect((await chat(gateway, key, MODEL)).status).toBe(200);

  const disabled = await unigate('accounts', 'disable', '--account', email);
  expect(disabled.code, disabled.stderr).toBe(0);
  expect(disabled.stdout).toContain(`account ${accountId}: disabled`);
  expect(await statusWithin(key, 403)).toBe(403);
  expect((await unigate('accounts', 'disable', '--account', accountId)).code).toBe(0);

  expect((await unigate('accounts', 'enable', '--account', accountId)).stdout).toContain('enabled');
  expect(await statusWithin(key, 200)).toBe(200);

  const deleted = await unigate('accounts', 'delete', '--account', accountId);
  expect(deleted.code, deleted.stderr).toBe(0);
  expect(deleted.stdout).toContain('deleted');
  expect(await statusWithin(key, 401)).toBe(401);
  expect((await unigate('accounts', 'delete', '--account', accountId)).code).toBe(0);
  const refused = await unigate('accounts', 'enable', '--account', accountId);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('deleted');
  expect((await unigate('accounts', 'delete', '--account', 'nobody@example.com')).stderr).toContain('no account');
}, 120_000);
