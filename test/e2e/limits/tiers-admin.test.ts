/**
 * Account tiers through the admin API (/admin/tiers) and gateway.yaml (`tiers:`), on both databases: create, read,
 * page, patch, delete, validation, the built-in `default` tier, and idempotent application of the file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIER_RPM, DEFAULT_TIER_TPM } from '../../../src/storage/migrations/0007-account-lifecycle-and-key-budgets.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { admin, call, collectPages, expectError, uniqueName } from '../admin/helpers.js';

interface TierJson {
  object: string;
  name: string;
  rpm: number | null;
  tpm: number | null;
  created_at: string;
  updated_at: string;
}

let gateway: TestGateway;
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-tiers-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, ['tiers:', '  - name: yaml-pro', '    rpm: 600', '    tpm: 3000000', '    signup_credit_usd: 2.5', '    signup_credit_days: 14', '  - name: yaml-free', '    rpm: 10', ''].join('\n'));
  gateway = await startTestGateway({ env: { GATEWAY_CONFIG: file } });
});

afterAll(async () => {
  await gateway?.close();
  await rm(directory, { recursive: true, force: true });
});

describe('/admin/tiers', () => {
  it('has the built-in default tier, with the documented finite limits', async () => {
    const builtIn = await admin<TierJson>(gateway, 'GET', '/admin/tiers/default');
    expect(builtIn.status, builtIn.text).toBe(200);
    expect(builtIn.body).toMatchObject({ object: 'tier', name: 'default', rpm: DEFAULT_TIER_RPM, tpm: DEFAULT_TIER_TPM });
  });

  it('creates, reads, patches (null clears) and deletes a tier', async () => {
    const name = uniqueName('gold');
    const created = await admin<TierJson>(gateway, 'POST', '/admin/tiers', { name, rpm: 120, tpm: 2 ** 40 });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ object: 'tier', name, rpm: 120, tpm: 2 ** 40 });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await admin<TierJson>(gateway, 'GET', `/admin/tiers/${name}`)).body).toEqual(created.body);
    const patched = await admin<TierJson>(gateway, 'PATCH', `/admin/tiers/${name}`, { tpm: null });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name, rpm: 120, tpm: null });
    const deleted = await admin(gateway, 'DELETE', `/admin/tiers/${name}`);
    expect(deleted.body).toEqual({ object: 'tier', name, deleted: true });
    expectError(await admin(gateway, 'GET', `/admin/tiers/${name}`), { status: 404, code: 'not_found' });
    expectError(await admin(gateway, 'DELETE', `/admin/tiers/${name}`), { status: 404 });
    expectError(await admin(gateway, 'PATCH', `/admin/tiers/${name}`, { rpm: 1 }), { status: 404 });
  });

  it('pages the list by name', async () => {
    for (let index = 0; index < 3; index += 1) expect((await admin(gateway, 'POST', '/admin/tiers', { name: uniqueName('paged') })).status).toBe(201);
    const { items, pages } = await collectPages<TierJson>(gateway, '/admin/tiers', 2);
    const names = items.map((tier) => tier.name);
    expect(pages).toBeGreaterThan(1);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['default', 'yaml-pro', 'yaml-free']));
  });

  it('validates input (400 naming the field) and refuses duplicates (409)', async () => {
    for (const [body, param] of [
      [{ name: 'Gold Tier!' }, 'name'],
      [{ name: '' }, 'name'],
      [{ rpm: 5 }, 'name'],
      [{ name: uniqueName('t'), rpm: 0 }, 'rpm'],
      [{ name: uniqueName('t'), tpm: -1 }, 'tpm'],
      [{ name: uniqueName('t'), rpm: 1.5 }, 'rpm'],
      [{ name: uniqueName('t'), concurrency: 3 }, undefined],
    ] as const) {
      expectError(await admin(gateway, 'POST', '/admin/tiers', body), { status: 400, ...(param === undefined ? {} : { param }) });
    }
    expectError(await admin(gateway, 'PATCH', '/admin/tiers/default', { name: 'renamed' }), { status: 400 });
    expectError(await admin(gateway, 'POST', '/admin/tiers', { name: 'default' }), { status: 409, code: 'conflict', param: 'name' });
  });

  it('keeps the default tier: it cannot be deleted, only given limits', async () => {
    expectError(await admin(gateway, 'DELETE', '/admin/tiers/default'), { status: 409, code: 'conflict' });
    const patched = await admin<TierJson>(gateway, 'PATCH', '/admin/tiers/default', { rpm: 100_000 });
    expect(patched.body).toMatchObject({ name: 'default', rpm: 100_000, tpm: DEFAULT_TIER_TPM });
    expect((await admin<TierJson>(gateway, 'PATCH', '/admin/tiers/default', { rpm: null })).body.rpm).toBeNull();
  });

  it('needs the admin token', async () => {
    for (const [method, route] of [['GET', '/admin/tiers'], ['POST', '/admin/tiers'], ['GET', '/admin/tiers/default'], ['PATCH', '/admin/tiers/default'], ['DELETE', '/admin/tiers/x']] as const) {
      expectError(await call(gateway.url, method, route, { token: 'wrong', ...(method === 'GET' ? {} : { body: {} }) }), { status: 401 });
    }
  });
});

describe('tiers in gateway.yaml', () => {
  it('creates the declared tiers', async () => {
    expect((await admin<TierJson>(gateway, 'GET', '/admin/tiers/yaml-pro')).body).toMatchObject({ rpm: 600, tpm: 3_000_000, signup_credit_usd: 2.5, signup_credit_days: 14 });
    // A tier that sets no sign-up credit of its own uses the gateway's (null).
    expect((await admin<TierJson>(gateway, 'GET', '/admin/tiers/yaml-free')).body).toMatchObject({ rpm: 10, tpm: null, signup_credit_usd: null, signup_credit_days: null });
  });

  it('applies idempotently: the same file leaves the same state; a changed file wins over admin edits', async () => {
    const before = await admin<TierJson>(gateway, 'GET', '/admin/tiers/yaml-pro');
    const { applyConfigFile } = await import('../../../src/management/apply-config-file.js');
    const { storage, clock } = gateway.gateway.services;
    const file = path.join(directory, 'gateway.yaml');
    expect(await applyConfigFile(file, storage, clock, {})).toMatchObject({ tiers: 2 });
    expect((await admin<TierJson>(gateway, 'GET', '/admin/tiers/yaml-pro')).body).toEqual(before.body);
    await admin(gateway, 'PATCH', '/admin/tiers/yaml-free', { rpm: 99, tpm: 5 });
    await applyConfigFile(file, storage, clock, {});
    // The file declares yaml-free completely: rpm 10 and no TPM limit.
    expect((await admin<TierJson>(gateway, 'GET', '/admin/tiers/yaml-free')).body).toMatchObject({ rpm: 10, tpm: null });
  });

  it('refuses an invalid tier entry, naming it', async () => {
    const bad = path.join(directory, 'bad.yaml');
    await writeFile(bad, 'tiers:\n  - name: ok-tier\n  - name: Bad Name\n');
    const { applyConfigFile } = await import('../../../src/management/apply-config-file.js');
    await expect(applyConfigFile(bad, gateway.gateway.services.storage, gateway.gateway.services.clock, {})).rejects.toThrow(/tiers\[1\]/);
  });
});
