/**
 * Per-key quota alert thresholds set by the account owner in the console, over real HTTP: a key's own percent makes
 * the existing checker mail exactly once when that key's spend crosses it, while a key without one (and no account
 * threshold) stays silent; invalid percents and other accounts' keys are refused, and roles without alerts:write too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSimulatorModel, chat, sleep } from '../admin/helpers.js';
import { waitUntil } from '../cli/cli-process.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

const MODEL = 'key-alerts-sim';

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway({ ALERT_CHECK_SECONDS: '1' });
  // Each request costs exactly $0.50.
  await addSimulatorModel(setup.gateway, MODEL, { per_request: 0.5 });
});

afterAll(async () => {
  await setup?.close();
});

interface KeyThreshold { key_id: string; name: string; quota_usd: number; alert_quota_percent: number | null; effective_percent: number | null }

describe('per-key quota alert thresholds', () => {
  it('mails once when a key crosses its own threshold; a key without one stays silent', async () => {
    const owner = await signUpUser(setup);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${owner.accountId}/credits`, { amount_usd: 20 })).status).toBe(200);
    const watched = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${owner.accountId}/keys`, { name: 'watched', quota_usd: 4 });
    const quiet = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${owner.accountId}/keys`, { name: 'quiet', quota_usd: 4 });
    expect(watched.status).toBe(201);

    const set = await owner.client.request<{ alert_quota_percent: number | null; keys: KeyThreshold[] }>('PUT', `/api/console/alerts/keys/${watched.body.id}`, { alert_quota_percent: 50 });
    expect(set.status, set.text).toBe(200);
    expect(set.body.alert_quota_percent).toBeNull();
    expect(set.body.keys).toEqual(expect.arrayContaining([
      expect.objectContaining({ key_id: watched.body.id, name: 'watched', quota_usd: 4, alert_quota_percent: 50, effective_percent: 50 }),
      expect.objectContaining({ key_id: quiet.body.id, alert_quota_percent: null, effective_percent: null }),
    ]));
    expect((await owner.client.request('PUT', `/api/console/alerts/keys/${watched.body.id}`, { alert_quota_percent: 150 })).status).toBe(400);
    expect((await owner.client.request('PUT', '/api/console/alerts/keys/key_elsewhere', { alert_quota_percent: 50 })).status).toBe(404);

    // 5 requests each: $2.50 of the $4 quota, past 50 % for both keys; only the watched key has a threshold.
    for (let round = 0; round < 5; round += 1) {
      for (const key of [watched.body.key, quiet.body.key]) expect((await chat(setup.gateway, key, MODEL)).status).toBe(200);
      await sleep(200);
    }
    const quotaMails = () => setup.mail.to(owner.email).filter((mail) => /quota/i.test(mail.subject ?? ''));
    await waitUntil(() => quotaMails().length >= 1, 10_000, 'the key quota alert mail');
    await sleep(2500);
    expect(quotaMails()).toHaveLength(1);
    expect(quotaMails()[0]?.text).toContain('watched');
    expect(quotaMails()[0]?.raw).not.toContain(watched.body.key);
    const alerts = await owner.client.request<{ alerts: Array<{ kind: string; subject_id: string; state: string; percent: number }> }>('GET', '/api/console/alerts');
    expect(alerts.body.alerts).toEqual([expect.objectContaining({ kind: 'key_quota', subject_id: watched.body.id, state: 'notified', percent: 50 })]);

    // Back to the account's threshold (none): the crossing is past, nothing more is sent.
    const cleared = await owner.client.request<{ keys: KeyThreshold[] }>('PUT', `/api/console/alerts/keys/${watched.body.id}`, { alert_quota_percent: null });
    expect(cleared.body.keys.find((key) => key.key_id === watched.body.id)?.alert_quota_percent).toBeNull();
  }, 60_000);
});
