/**
 * A real `unigate serve` process for the realtime memory tests, in front of the mock OpenAI Realtime upstream (which
 * runs in the test process, so its memory is not the gateway's). The gateway is started with `--expose-gc` and a probe
 * preloaded: asked over IPC, it runs two full collections and answers `process.memoryUsage()`, so live heap and RSS are
 * read after garbage is gone, not whenever V8 last happened to collect. SQLite in the process's directory, or a
 * throwaway PostgreSQL database when TEST_DATABASE_URL is a postgres URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { startMockOpenAIRealtime, type MockOpenAIRealtime, type MockRealtimeOptions } from '../../support/mock-openai-realtime.js';
import { assertBuilt, BIN, cleanEnv, freePort, withTimeout } from '../cli/cli-process.js';
import { MODEL, PRICES, UPSTREAM_MODEL } from './realtime-support.js';

/** What the probe answers: `process.memoryUsage()` after two full collections. */
export interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const PROBE = `
process.on('message', (message) => {
  if (message === null || typeof message !== 'object' || message.type !== 'memory-probe') return;
  globalThis.gc();
  globalThis.gc();
  const usage = process.memoryUsage();
  process.send({ type: 'memory-sample', id: message.id, rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers });
});
`;

export interface RealtimeProcess {
  /** ws://127.0.0.1:PORT/v1/realtime?model=voice */
  url: string;
  pid: number;
  upstream: MockOpenAIRealtime;
  key: string;
  memory(): Promise<MemorySample>;
  admin(method: string, route: string, body?: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startRealtimeProcess(env: Record<string, string>, mock: MockRealtimeOptions = {}): Promise<RealtimeProcess> {
  assertBuilt();
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-realtime-memory-'));
  const probe = path.join(directory, 'memory-probe.cjs');
  await writeFile(probe, PROBE);
  const database: ThrowawayPostgresDatabase | null = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await createThrowawayPostgresDatabase() : null;
  const upstream = await startMockOpenAIRealtime(mock);
  const port = await freePort();
  let consolePort = await freePort();
  while (consolePort === port) consolePort = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', '--require', probe, BIN, 'serve'], {
    cwd: directory,
    env: cleanEnv({ PORT: String(port), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', ...(database === null ? {} : { DATABASE_URL: database.url }), ...env }),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await upstream.close();
    await database?.drop();
    await rm(directory, { recursive: true, force: true });
  };
  try {
    // A loaded machine can take long to start it (on PostgreSQL: a new database and every migration).
    const deadline = Date.now() + 45_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gateway exited:\n${output}`);
      const status = await fetch(`${api}/api/status`).then((response) => response.status, () => 0);
      if (status === 200) break;
      if (Date.now() > deadline) throw new Error(`gateway did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const admin = async (method: string, route: string, body?: unknown): Promise<Record<string, unknown>> => {
      const response = await fetch(api + route, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const parsed = (await response.json()) as Record<string, unknown>;
      if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`);
      return parsed;
    };
    await admin('POST', '/admin/models', {
      id: MODEL,
      kind: 'chat',
      pricing: { input_per_mtok: PRICES.text, cached_input_per_mtok: PRICES.cachedText, output_per_mtok: PRICES.outText, input_audio_per_mtok: PRICES.audio, cached_input_audio_per_mtok: PRICES.cachedAudio, output_audio_per_mtok: PRICES.outAudio },
    });
    await admin('POST', '/admin/channels', { name: 'realtime', type: 'openai', base_url: upstream.baseUrl, api_key: 'sk-upstream-test', models: { [MODEL]: UPSTREAM_MODEL } });
    const account = await admin('POST', '/admin/accounts', { email: `memory-${randomBytes(4).toString('hex')}@example.com` });
    await admin('POST', `/admin/accounts/${String(account.id)}/credits`, { amount_usd: 100 });
    const key = await admin('POST', `/admin/accounts/${String(account.id)}/keys`, {});
    let probes = 0;
    return {
      url: `${api.replace(/^http/, 'ws')}/v1/realtime?model=${MODEL}`,
      pid: child.pid ?? 0,
      upstream,
      key: String(key.key),
      admin,
      memory() {
        const id = ++probes;
        return withTimeout(new Promise<MemorySample>((resolve) => {
          const onMessage = (message: unknown): void => {
            const sample = message as MemorySample & { type?: string; id?: number };
            if (sample.type !== 'memory-sample' || sample.id !== id) return;
            child.off('message', onMessage);
            resolve({ rss: sample.rss, heapUsed: sample.heapUsed, external: sample.external, arrayBuffers: sample.arrayBuffers });
          };
          child.on('message', onMessage);
          child.send({ type: 'memory-probe', id });
        }), 10_000, 'memory probe');
      },
      close: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
