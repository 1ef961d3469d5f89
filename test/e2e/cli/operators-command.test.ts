/** `unigate operators create|list`, run as the operator runs it, against a running gateway's database; the new operator signs in to the console. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, strongPassword, uniqueEmail } from '../../support/console-client.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { assertBuilt, cleanEnv, REPO_ROOT, runCommand } from './cli-process.js';

let gateway: TestGateway;

function operators(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCommand(['operators', ...args], REPO_ROOT, cleanEnv({ DATABASE_URL: gateway.databaseUrl, DATA_DIR: gateway.dataDirectory }));
}

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway({ database: 'sqlite' });
});

afterAll(async () => {
  await gateway?.close();
});

describe('unigate operators', () => {
  it('creates an owner with a one-time password that signs in; operator routes then wait for two-factor', async () => {
    const email = uniqueEmail('cli-owner');
    const made = await operators('create', '--email', email, '--role', 'owner');
    expect(made.code, made.stderr).toBe(0);
    const password = /^password: (\S+)$/m.exec(made.stdout)?.[1];
    expect(password).toBeDefined();
    const client = new ConsoleClient(gateway.consoleUrl);
    const signedIn = await client.signIn(email, password as string);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect((await client.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'owner', two_factor_required: true });
    expect((await client.request('GET', '/api/operator/overview')).body).toMatchObject({ error: { code: 'two_factor_required' } });

    const listed = await operators('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^owner\\s+${email.replace(/[.]/g, '\\.')}\\s+\\(two-factor not on yet\\)$`, 'm'));
  });

  it('gives an existing console user a role without touching their password', async () => {
    const client = new ConsoleClient(gateway.consoleUrl);
    const email = uniqueEmail('cli-viewer');
    const password = strongPassword();
    expect((await client.signUp(email, password)).status).toBe(201);
    const granted = await operators('create', '--email', email, '--role', 'viewer');
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stdout).not.toMatch(/^password:/m);
    expect((await client.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'viewer' });
  });

  it('refuses an unknown role', async () => {
    const refused = await operators('create', '--email', uniqueEmail(), '--role', 'god');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('operators create needs --email <email> --role owner|admin|support|viewer');
  });
});
