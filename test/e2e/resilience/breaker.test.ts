/**
 * Passive health end to end: breakers open after failures and the router skips them, cool down, let one probe
 * through, close on success (a recovered channel gets traffic again); a failed probe doubles the cooldown; when
 * every channel is open the least recently failed is still tried; 429 Retry-After pauses a channel-model; an
 * unreachable host takes the whole channel out. The admin sees it all, /api/status and /metrics reflect it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, channelFor, sleep, startUpstream, usageRow, type AnyUpstream } from './resilience-support.js';

interface ModelHealth {
  model: string;
  state: string;
  open_until: string | null;
  open_reason: string | null;
  cooldown_level: number;
  consecutive_failures: number;
  recent: { successes: number; failures: number };
  last_error: { class: string; at: string } | null;
}
interface ChannelHealthBody {
  channel_id: string;
  status: string;
  breaker: Omit<ModelHealth, 'model'>;
  models: ModelHealth[];
  rejected_keys: Array<{ index: number; reason: string; flagged_at: string }>;
}

/**
 * Long enough that the checks made while a breaker is open (health, status page, metrics, a request that skips the
 * channel) all fall inside its cooldown on a loaded machine, where each can take hundreds of milliseconds.
 */
const COOLDOWN_MS = 2000;
let gateway: TestGateway;
let account: SeededAccount;
let primary: AnyUpstream;
let backup: AnyUpstream;
let primaryId: string;
let backupId: string;

async function health(channelId: string): Promise<ChannelHealthBody> {
  return (await gateway.admin<ChannelHealthBody>('GET', `/admin/channels/${channelId}/health`)).body;
}

async function ask(model = 'brk', prompt = 'hello there'): Promise<Awaited<ReturnType<typeof callChat>>> {
  return callChat(gateway, account.key, 'openai', model, prompt, false);
}

beforeAll(async () => {
  primary = await startUpstream('openai');
  backup = await startUpstream('openai');
  gateway = await startTestGateway({ env: { BREAKER_FAILURE_THRESHOLD: '2', BREAKER_COOLDOWN_MS: String(COOLDOWN_MS), BREAKER_MAX_COOLDOWN_MS: '20000', METRICS_PORT: '0' } });
  ({ channelId: primaryId } = await addRoutedModel(gateway, { model: 'brk', channel: channelFor(primary, 'brk-primary', 'brk', { priority: 10 }) }));
  backupId = (await gateway.admin<{ id: string }>('POST', '/admin/channels', channelFor(backup, 'brk-backup', 'brk', { priority: 0 }))).body.id;
  account = await seedAccount(gateway, { balanceUsd: 50 });
});

beforeEach(async () => {
  primary.fault(null);
  backup.fault(null);
  await gateway.admin('POST', `/admin/channels/${primaryId}/health/reset`);
  await gateway.admin('POST', `/admin/channels/${backupId}/health/reset`);
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await backup?.close();
});

describe('circuit breaker', () => {
  it('opens after failures, skips the channel, cools down, probes, closes, and the channel gets traffic again', async () => {
    primary.fault({ kind: 'status', status: 500, times: 2 });
    for (let index = 0; index < 2; index += 1) expect((await ask()).status).toBe(200);
    const opened = await health(primaryId);
    expect(opened.status).toBe('down');
    expect(opened.models[0]).toMatchObject({ model: 'brk', state: 'open', open_reason: 'failures', consecutive_failures: 2, last_error: { class: 'server_error' } });
    expect(opened.models[0]!.recent.failures).toBe(2);
    expect(opened.breaker.state).toBe('closed');

    // The public status page says the service is degraded, never which channel.
    const status = (await (await fetch(`${gateway.url}/api/status`)).json()) as { status: string };
    expect(status.status).toBe('degraded');
    expect(JSON.stringify(status)).not.toContain('brk-primary');
    const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).text();
    expect(metrics).toContain('unigate_breaker_state{channel="brk-primary",model="brk"} 2');

    const skipped = primary.requests.length;
    const answer = await ask();
    expect(answer.status).toBe(200);
    expect(primary.requests.length).toBe(skipped);
    expect(await usageRow(gateway, account.keyId, answer.requestId)).toMatchObject({ attempts: 1, attempted_channels: [backupId] });

    await sleep(COOLDOWN_MS + 50);
    expect((await health(primaryId)).models[0]!.state).toBe('half-open');
    const probe = await ask();
    expect(probe.status).toBe(200);
    expect(primary.requests.length).toBe(skipped + 1);
    expect(await usageRow(gateway, account.keyId, probe.requestId)).toMatchObject({ attempts: 1, attempted_channels: [primaryId] });
    expect((await health(primaryId))).toMatchObject({ status: 'operational', models: [{ state: 'closed', consecutive_failures: 0 }] });
    for (let index = 0; index < 3; index += 1) await ask();
    expect(primary.requests.length).toBe(skipped + 4);
    const after = await (await fetch(`${gateway.url}/api/status`)).json() as { status: string };
    expect(after.status).toBe('ok');
  });

  it('a failed probe re-opens the breaker with a doubled cooldown', async () => {
    primary.fault({ kind: 'status', status: 500, times: 3 });
    await ask();
    await ask();
    await sleep(COOLDOWN_MS + 50);
    const before = Date.now();
    expect((await ask()).status).toBe(200);
    const after = Date.now();
    const reopened = (await health(primaryId)).models[0]!;
    expect(reopened).toMatchObject({ state: 'open', cooldown_level: 1 });
    // Twice the cooldown from the failed probe, which came between `before` and `after` (on a loaded machine the
    // request may take a while either side of it).
    const openUntil = Date.parse(reopened.open_until!);
    expect(openUntil).toBeGreaterThan(before + COOLDOWN_MS * 2 - 100);
    expect(openUntil).toBeLessThan(after + COOLDOWN_MS * 2 + 100);
  });

  it('when every channel is open, the least recently failed is tried rather than failing at once', async () => {
    primary.fault({ kind: 'status', status: 500, times: 2 });
    backup.fault({ kind: 'status', status: 500, times: 2 });
    expect((await ask()).status).toBe(502);
    expect((await ask()).status).toBe(502);
    expect((await health(primaryId)).models[0]!.state).toBe('open');
    expect((await health(backupId)).models[0]!.state).toBe('open');
    const answer = await ask();
    expect(answer.status).toBe(200);
    // The primary failed first in the last round, so it failed least recently.
    expect(await usageRow(gateway, account.keyId, answer.requestId)).toMatchObject({ attempts: 1, attempted_channels: [primaryId] });
    expect((await health(primaryId)).models[0]!.state).toBe('closed');
    expect((await health(backupId)).models[0]!.state).toBe('open');
  });

  it('a 429 with Retry-After pauses the channel-model for that long, then it gets traffic again', async () => {
    // Three seconds: the checks and the request that must skip the paused channel fit in it on a loaded machine.
    primary.fault({ kind: 'status', status: 429, headers: { 'retry-after': '3' } });
    const first = await ask();
    expect(first.status).toBe(200);
    expect(await usageRow(gateway, account.keyId, first.requestId)).toMatchObject({ attempts: 2, attempted_channels: [primaryId, backupId] });
    expect((await health(primaryId)).models[0]).toMatchObject({ state: 'open', open_reason: 'retry-after', last_error: { class: 'throttled' } });
    const paused = primary.requests.length;
    await ask();
    expect(primary.requests.length).toBe(paused);
    await sleep(3050);
    await ask();
    expect(primary.requests.length).toBe(paused + 1);
  });

  it('an unreachable host opens the channel breaker: all its models leave the pool', async () => {
    const dead = await startUpstream('openai');
    const deadUrl = dead.url;
    await dead.close();
    const { channelId: deadId } = await addRoutedModel(gateway, { model: 'unreach', channel: { ...channelFor({ kind: 'openai', url: deadUrl }, 'unreach-dead', 'unreach', { priority: 10 }) } });
    await gateway.admin('POST', '/admin/channels', channelFor(backup, 'unreach-backup', 'unreach'));
    for (let index = 0; index < 2; index += 1) expect((await ask('unreach')).status).toBe(200);
    const down = await health(deadId);
    expect(down).toMatchObject({ status: 'down', breaker: { state: 'open', last_error: { class: 'connect' } } });
    const answer = await ask('unreach');
    expect(await usageRow(gateway, account.keyId, answer.requestId)).toMatchObject({ attempts: 1 });
  });
});

describe('admin health and channel tests', () => {
  it('GET /admin/health lists every channel and channel-model with state, counts and last error, no URL or key', async () => {
    primary.fault({ kind: 'status', status: 503, times: 1 });
    await ask();
    const answer = await gateway.admin<{ object: string; status: string; shared: boolean; channels: ChannelHealthBody[] }>('GET', '/admin/health');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ object: 'health', shared: false });
    const entry = answer.body.channels.find((channel) => channel.channel_id === primaryId);
    expect(entry).toMatchObject({ status: 'degraded', models: [{ model: 'brk', state: 'closed', consecutive_failures: 1, last_error: { class: 'server_error' } }] });
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain('sk-upstream-test');
    expect((await fetch(`${gateway.url}/admin/health`)).status).toBe(401);
  });

  it('POST /admin/channels/:id/test reports latency and outcome, feeds the breaker, and leaks nothing', async () => {
    const ok = await gateway.admin<Record<string, unknown>>('POST', `/admin/channels/${primaryId}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'channel.test', ok: true, outcome: 'success', model: 'brk', upstream_model: 'gpt-4o-mini', upstream_status: 200, failure_class: null });
    expect(typeof ok.body.latency_ms).toBe('number');

    primary.fault({ kind: 'status', status: 500, times: 2 });
    const failed = await gateway.admin<Record<string, unknown>>('POST', `/admin/channels/${primaryId}/test`, { model: 'brk' });
    expect(failed.body).toMatchObject({ ok: false, outcome: 'failure', failure_class: 'server_error', upstream_status: 500 });
    expect(JSON.stringify(failed.body)).not.toContain('127.0.0.1');
    expect(JSON.stringify(failed.body)).not.toContain('sk-upstream-test');
    await gateway.admin('POST', `/admin/channels/${primaryId}/test`);
    expect((await health(primaryId)).models[0]!.state).toBe('open');
    // The channel recovered: a passing test closes the breaker at once, without waiting for the cooldown.
    const recovered = await gateway.admin<{ ok: boolean; health: ChannelHealthBody }>('POST', `/admin/channels/${primaryId}/test`);
    expect(recovered.body.ok).toBe(true);
    expect(recovered.body.health.models[0]!.state).toBe('closed');

    expect((await gateway.admin('POST', `/admin/channels/${primaryId}/test`, { model: 'not-served' })).status).toBe(400);
    expect((await gateway.admin('POST', '/admin/channels/ch_missing/test')).status).toBe(404);
  });
});

describe('metrics', () => {
  it('serves Prometheus text at /metrics to the admin, and without auth on METRICS_PORT', async () => {
    primary.fault({ kind: 'status', status: 500, times: 1 });
    await ask();
    await callChat(gateway, account.key, 'anthropic', 'brk', 'hello', true);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } });
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toMatch(/unigate_requests_total\{protocol="openai",endpoint="chat.completions",status="200"\} \d+/);
    expect(text).toMatch(/unigate_requests_total\{protocol="anthropic",endpoint="messages",status="200"\} \d+/);
    expect(text).toMatch(/unigate_upstream_attempts_total\{channel="brk-primary",outcome="failure"\} \d+/);
    expect(text).toMatch(/unigate_upstream_attempts_total\{channel="brk-backup",outcome="success"\} \d+/);
    expect(text).toMatch(/unigate_upstream_errors_total\{channel="brk-primary",class="server_error"\} \d+/);
    expect(text).toMatch(/unigate_retries_total [1-9]\d*/);
    expect(text).toMatch(/unigate_request_duration_seconds_bucket\{protocol="openai",endpoint="chat.completions",le="\+Inf"\} \d+/);
    expect(text).toMatch(/unigate_time_to_first_byte_seconds_count\{protocol="anthropic",stream="true"\} \d+/);
    expect(text).toMatch(/unigate_in_flight_requests 1/);
    const url = gateway.gateway.metricsUrl;
    expect(url).not.toBeNull();
    const open = await fetch(`${url}/metrics`);
    expect(open.status).toBe(200);
    expect(await open.text()).toContain('unigate_breaker_state');
    expect((await fetch(`${url}/admin/health`)).status).toBe(404);
  });
});
