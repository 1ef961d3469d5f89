/**
 * A real `unigate serve` process for the upload tests: its TMPDIR is a spool directory of the test's own (so spooled
 * files can be watched and counted), a mock OpenAI upstream behind an `openai` channel, and an admin helper.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { assertBuilt, cleanEnv, freePort, killAll, startCommand, waitForHttp, type RunningCommand } from '../cli/cli-process.js';

export interface UploadGateway {
  /** http://127.0.0.1:PORT */
  api: string;
  /** A scratch directory of the test's own (fixtures go here). */
  directory: string;
  /** The gateway's TMPDIR, where it spools uploads. */
  spool: string;
  server: RunningCommand;
  upstream: MockOpenAIUpstream;
  /** An admin API call; throws on a status of 300 or more. */
  admin(method: string, route: string, body?: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startUploadGateway(name: string, logLevel = 'warn'): Promise<UploadGateway> {
  assertBuilt();
  const directory = await mkdtemp(path.join(tmpdir(), `unigate-${name}-`));
  const spool = path.join(directory, 'spool');
  await mkdir(spool);
  const upstream = await startMockOpenAIUpstream({ recordRequests: true });
  const port = await freePort();
  let consolePort = await freePort();
  while (consolePort === port) consolePort = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const server = startCommand(['serve'], directory, cleanEnv({ PORT: String(port), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN: adminToken, TMPDIR: spool, LOG_LEVEL: logLevel }));
  await waitForHttp(`${api}/api/status`, server, 15_000);

  const admin = async (method: string, route: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(api + route, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = (await response.json()) as Record<string, unknown>;
    if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };

  return {
    api,
    directory,
    spool,
    server,
    upstream,
    admin,
    async close() {
      killAll();
      await upstream.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
