/**
 * The real process (`node bin/unigate.js serve`) loads the libraries of features nobody has used yet only at their
 * first use: a gateway that serves no MCP, realtime, single sign-on or payments traffic never holds their modules in
 * memory, and the admin API, the console's JSON API and SCIM are loaded by the first request under their prefix, the
 * batches, files, rerank, MCP and realtime client-secret routes by their own first request, the WebSocket endpoints
 * (realtime, the Responses API's WebSocket mode) by the first upgrade, and each family's MCP tool loop by the first
 * request naming MCP servers. The price data package is never loaded: the catalog reads its extract, and zod's
 * messages in other languages than English never are.
 * Every package module and every module of the build the process resolves is recorded by a preloaded hook.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, freePort, killAll, REPO_ROOT, startCommand, waitForHttp, type RunningCommand } from './cli-process.js';

const HOOK = pathToFileURL(path.join(REPO_ROOT, 'test', 'support', 'fixtures', 'record-module-loads.mjs')).href;
/** zod: the admin API's input schemas and the few the request path needs only when a request asks for them. */
const NOT_AT_START = ['ws', '@modelcontextprotocol/sdk', 'jose', 'yaml', 'stripe', 'nodemailer', 'pdfkit', 'pg', 'argon2', 'busboy', '@pydantic/genai-prices', 'zod'];
/** Modules of the build loaded at their first use: the WebSocket endpoints at the first upgrade, the MCP tool loops at the first request naming MCP servers. */
const AT_FIRST_USE = {
  realtime: '/dist/src/realtime/realtime-endpoint.js',
  responsesSocket: '/dist/src/realtime/responses-socket.js',
  responsesMcp: '/dist/src/mcp-tools/responses-mcp.js',
  messagesMcp: '/dist/src/mcp-tools/messages-mcp.js',
  mcpSession: '/dist/src/mcp/upstream-session.js',
  mcpHealthChecks: '/dist/src/mcp/mcp-health-checks.js',
  mcpOAuthTokens: '/dist/src/mcp/oauth-tokens.js',
  mcpStdioProcesses: '/dist/src/mcp/stdio-processes.js',
  configFile: '/dist/src/management/apply-config-file.js',
  /** the provider preference's parser: at the first request giving one */
  providerPreference: '/dist/src/routing/parse-provider-preference.js',
  /** the guardrail policies' schema: with the first guardrail bound to anything */
  guardrailSettings: '/dist/src/guardrails/settings.js',
  providerShortcuts: '/dist/src/management/apply-provider-shortcuts.js',
};
/**
 * undici's entry (its fetch, WebSocket, cache and mock modules): the relay uses only its dispatcher core; the whole
 * client API is loaded by the first webhook, guardrail webhook or MCP connection, never by the admin API's load.
 */
const UNDICI_ENTRY = '/node_modules/undici/index.js';
/** Route groups of the build, each loaded by the first request under its prefix. */
const GROUPS = { admin: '/dist/src/admin-routes.js', console: '/dist/src/console/console-api.js', scim: '/dist/src/scim/scim-routes.js' };
/** API routes of the build few gateways serve, each loaded by its first request. */
const ROUTES = {
  batches: '/dist/src/http/routes/batches.js',
  messageBatches: '/dist/src/http/routes/message-batches.js',
  geminiBatches: '/dist/src/http/routes/gemini-batches.js',
  files: '/dist/src/http/routes/files.js',
  geminiFiles: '/dist/src/http/routes/gemini-files.js',
  rerank: '/dist/src/operations/rerank.js',
  mcp: '/dist/src/mcp/mcp-endpoint.js',
  clientSecrets: '/dist/src/realtime/client-secrets-route.js',
};
/** The build's bundle of kysely (scripts/vendor.vite.config.ts; `npm run build` makes it, tsc alone does not). */
const KYSELY_BUNDLE = path.join(REPO_ROOT, 'dist', 'vendor', 'kysely.js');
const ADMIN_TOKEN = 'adm_lazy_modules_test_token_0123456789';

let directory: string;
let server: RunningCommand;
let api: string;
let consoleOrigin: string;
let log: string;

const loadedModules = (): string[] => readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
const admin = (path: string, init: RequestInit = {}) => fetch(`${api}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...init.headers } });

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-lazy-'));
  log = path.join(directory, 'modules.log');
  const apiPort = await freePort();
  let consolePort = await freePort();
  while (consolePort === apiPort) consolePort = await freePort();
  api = `http://127.0.0.1:${apiPort}`;
  consoleOrigin = `http://127.0.0.1:${consolePort}`;
  server = startCommand(['serve'], directory, cleanEnv({
    PORT: String(apiPort), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN,
    NODE_OPTIONS: `--import ${HOOK}`, MODULE_LOAD_LOG: log,
  }));
  await waitForHttp(`${api}/api/status`, server, 20_000);
});

afterAll(async () => {
  killAll();
  await rm(directory, { recursive: true, force: true });
});

describe('a gateway at start', () => {
  it('has not loaded the libraries of features not used yet', async () => {
    // A chat request's path is warm too: an unauthenticated call runs the API's front door.
    const refused = await fetch(`${api}/v1/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(refused.status).toBe(401);
    expect(existsSync(log), 'the hook recorded the modules loaded').toBe(true);
    const loaded = loadedModules();
    expect(loaded.some((url) => url.includes('/node_modules/undici/')), 'the hook sees package modules').toBe(true);
    const packageOf = (name: string) => loaded.filter((url) => url.includes(`/node_modules/${name}/`));
    // kysely: from the one module the build bundled it into, none of its package's own; from the package where the
    // tree was compiled without the bundle.
    if (existsSync(KYSELY_BUNDLE)) {
      expect(loaded.filter((url) => url.endsWith('/dist/vendor/kysely.js')), 'kysely is loaded from its bundle').toHaveLength(1);
      expect(packageOf('kysely'), 'kysely\'s package modules are loaded beside its bundle').toEqual([]);
    } else {
      expect(packageOf('kysely').length, 'kysely is loaded from its package').toBeGreaterThan(0);
    }
    for (const name of NOT_AT_START) expect(packageOf(name), `${name} is loaded at start`).toEqual([]);
    expect(loaded.some((url) => url.endsWith('/dist/src/gateway.js')), 'the hook sees the build').toBe(true);
    for (const [group, module] of Object.entries(GROUPS)) expect(loaded.filter((url) => url.endsWith(module)), `the ${group} routes are loaded at start`).toEqual([]);
    for (const [route, module] of Object.entries(ROUTES)) expect(loaded.filter((url) => url.endsWith(module)), `the ${route} route is loaded at start`).toEqual([]);
    for (const [feature, module] of Object.entries(AT_FIRST_USE)) expect(loaded.filter((url) => url.endsWith(module)), `the ${feature} module is loaded at start`).toEqual([]);
    expect(loaded.some((url) => url.includes('/node_modules/undici/lib/dispatcher/agent.js')), 'the relay\'s dispatcher is loaded').toBe(true);
    expect(loaded.filter((url) => url.endsWith(UNDICI_ENTRY)), 'undici\'s whole client API is loaded at start').toEqual([]);
  });

  it('loads the admin API at its first requests, which answer as always, together and once', async () => {
    // Concurrent first requests: each waits for the one load and gets its own answer.
    const answers = await Promise.all([
      admin('/admin/channels'),
      admin('/admin/channels'),
      admin('/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'lazy@example.com' }) }),
      fetch(`${api}/admin/channels`),
      admin('/admin/no-such-route'),
      admin('/admin/channels', { method: 'PUT' }),
    ]);
    const [list, again, created, anonymous, unknown, wrongMethod] = answers;
    expect(list?.status).toBe(200);
    expect(((await list?.json()) as { data: unknown[] }).data).toEqual([]);
    expect(again?.status).toBe(200);
    expect(created?.status).toBe(201);
    expect(((await created?.json()) as { email: string }).email).toBe('lazy@example.com');
    expect(anonymous?.status).toBe(401);
    expect(unknown?.status).toBe(404);
    expect(((await unknown?.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(wrongMethod?.status).toBe(405);
    expect(wrongMethod?.headers.get('allow')).toContain('POST');
    expect(loadedModules().some((url) => url.endsWith(GROUPS.admin)), 'the admin routes are loaded now').toBe(true);
    // zod came with them, speaking English only: its bundle of every other language's messages is never loaded.
    expect(loadedModules().some((url) => url.endsWith('/node_modules/zod/v4/classic/schemas.js')), 'zod is loaded now').toBe(true);
    expect(loadedModules().filter((url) => url.includes('/node_modules/zod/v4/locales/') && !url.endsWith('/locales/en.js')), 'zod\'s other languages are loaded').toEqual([]);
    const invalid = await admin('/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 5 }) });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toBe("'email': Invalid input: expected string, received number");
    // What an idle gateway configured through the admin API holds: no MCP connection, health check or client API.
    for (const module of [AT_FIRST_USE.mcpHealthChecks, AT_FIRST_USE.mcpOAuthTokens, AT_FIRST_USE.mcpStdioProcesses, UNDICI_ENTRY]) {
      expect(loadedModules().filter((url) => url.endsWith(module)), `${module} is loaded with the admin API`).toEqual([]);
    }
    // Later requests use the loaded group.
    const accounts = await admin('/admin/accounts');
    expect(accounts.status).toBe(200);
  });

  it('loads the console API and SCIM at their first requests, which answer as always', async () => {
    const [config, unknown, page] = await Promise.all([
      fetch(`${consoleOrigin}/api/config`),
      fetch(`${consoleOrigin}/api/no-such-route`),
      fetch(`${consoleOrigin}/healthz`),
    ]);
    expect(config.status).toBe(200);
    expect(((await config.json()) as { features: { sign_up: boolean } }).features).toHaveProperty('sign_up');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(page.status).toBe(200);
    // The built console is read at the first page asked for: concurrent first pages get the same page.
    const pages = await Promise.all([fetch(`${consoleOrigin}/`), fetch(`${consoleOrigin}/keys`)]);
    for (const answer of pages) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/html');
      expect(await answer.text()).toContain('<html');
    }
    expect(pages[0]?.headers.get('etag')).toBe(pages[1]?.headers.get('etag'));
    const scim = await fetch(`${api}/scim/v2/Users`, { headers: { authorization: 'Bearer not-a-scim-token' } });
    expect(scim.status).toBe(401);
    const loaded = loadedModules();
    expect(loaded.some((url) => url.endsWith(GROUPS.console))).toBe(true);
    expect(loaded.some((url) => url.endsWith(GROUPS.scim))).toBe(true);
  });

  it('loads the batches, files, rerank, MCP and client-secret routes at their first requests, concurrent ones included, which answer as always', async () => {
    const bearer = { authorization: 'Bearer sk-not-a-key' };
    const answers = await Promise.all([
      fetch(`${api}/v1/batches`, { headers: bearer }),
      fetch(`${api}/v1/batches`, { headers: bearer }),
      fetch(`${api}/v1/batches`, { method: 'POST', headers: bearer }),
      fetch(`${api}/v1/batches`, { method: 'PUT', headers: bearer }),
      fetch(`${api}/v1/batches/batch_1/no-such-route`, { headers: bearer }),
      fetch(`${api}/v1/messages/batches`, { headers: { 'x-api-key': 'sk-not-a-key' } }),
      fetch(`${api}/v1beta/batches`, { headers: { 'x-goog-api-key': 'not-a-key' } }),
      fetch(`${api}/v1/files`, { headers: bearer }),
      fetch(`${api}/v1beta/files`, { headers: { 'x-goog-api-key': 'not-a-key' } }),
      fetch(`${api}/v1/rerank`, { method: 'POST', headers: bearer, body: '{}' }),
      fetch(`${api}/v1/rerank`, { headers: bearer }),
      fetch(`${api}/mcp`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' }),
      fetch(`${api}/v1/realtime/client_secrets`, { method: 'POST', headers: bearer, body: '{}' }),
    ]);
    const statuses = answers.map((answer) => answer.status);
    // Unknown keys are refused 401 (Google's clients and Anthropic's too), unknown methods 405, unknown paths 404.
    expect(statuses).toEqual([401, 401, 401, 405, 404, 401, 401, 401, 401, 401, 405, 401, 401]);
    const [listed, , , wrongMethod, unknown, messageBatches, geminiBatches] = answers;
    expect(((await listed?.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    expect(wrongMethod?.headers.get('allow')).toContain('GET');
    expect(((await unknown?.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(((await messageBatches?.json()) as { type: string; error: { type: string } }).error.type).toBe('authentication_error');
    expect(((await geminiBatches?.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    const loaded = loadedModules();
    for (const [route, module] of Object.entries(ROUTES)) expect(loaded.some((url) => url.endsWith(module)), `the ${route} route is loaded now`).toBe(true);
  });

  it('serves the bundled catalog from its extract, never loading the price data package', async () => {
    const channel = await admin('/admin/channels', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bundled', type: 'openai', base_url: 'http://127.0.0.1:9', api_key: 'sk-upstream', models: ['*'] }),
    });
    expect(channel.status).toBe(201);
    const models = await fetch(`${api}/v1/models`);
    expect(models.status).toBe(200);
    const listed = ((await models.json()) as { data: Array<{ id: string; price_source: string; pricing: Record<string, unknown> }> }).data;
    expect(listed.length).toBeGreaterThan(20);
    expect(listed.find((model) => model.id === 'gpt-4o-mini')).toMatchObject({ price_source: 'bundled', pricing: { input_per_mtok: 0.15, output_per_mtok: 0.6 } });
    expect(loadedModules().filter((url) => url.includes('/node_modules/@pydantic/genai-prices/'))).toEqual([]);
  });

  it('loads the WebSocket endpoints at the first upgrades, concurrent ones included, which answer as always', async () => {
    const upgrade = (route: string) => new Promise<number>((resolve, reject) => {
      const sent = request(`${api}${route}`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: 'Bearer sk-not-a-key' } });
      sent.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      sent.on('upgrade', (_response, socket) => {
        socket.destroy();
        reject(new Error(`${route}: upgraded with an unknown key`));
      });
      sent.on('error', reject);
      sent.end();
    });
    const statuses = await Promise.all([upgrade('/v1/realtime?model=gpt-realtime'), upgrade('/v1/realtime?model=gpt-realtime'), upgrade('/v1/responses')]);
    expect(statuses).toEqual([401, 401, 401]);
    const loaded = loadedModules();
    expect(loaded.some((url) => url.endsWith(AT_FIRST_USE.realtime))).toBe(true);
    expect(loaded.some((url) => url.endsWith(AT_FIRST_USE.responsesSocket))).toBe(true);
  });

  it('loads the provider preference\'s parser at the first request giving one, concurrent ones included; requests giving none never load it', async () => {
    const account = (await (await admin('/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'preference-lazy@example.com' }) })).json()) as { id: string };
    const key = (await (await admin(`/admin/accounts/${account.id}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { key: string };
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const chat = (body: Record<string, unknown>, extra: Record<string, string> = {}) => fetch(`${api}/v1/chat/completions`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }], ...body }) });
    const plain = await chat({});
    expect(plain.status).toBeGreaterThanOrEqual(400);
    const plainError = ((await plain.json()) as { error: { code: string } }).error;
    expect(loadedModules().filter((url) => url.endsWith(AT_FIRST_USE.providerPreference)), 'a request without a preference loads no parser').toEqual([]);
    const [malformed, again, header] = await Promise.all([
      chat({ provider: { sort: 'fastest' } }),
      chat({ provider: { sort: 'fastest' } }),
      chat({}, { 'x-gateway-provider': '{"only":[""]}' }),
    ]);
    for (const answer of [malformed, again]) {
      expect(answer?.status).toBe(400);
      expect(((await answer?.json()) as { error: { param: string } }).error.param).toBe('provider.sort');
    }
    expect(header?.status).toBe(400);
    expect(((await header?.json()) as { error: { param: string } }).error.param).toBe('x-gateway-provider.only.0');
    expect(loadedModules().some((url) => url.endsWith(AT_FIRST_USE.providerPreference)), 'the parser is loaded now').toBe(true);
    // A well-formed preference is read as before: the unknown model is what is refused, as without one.
    const wellFormed = await chat({ provider: { sort: 'price' } });
    expect(wellFormed.status).toBe(plain.status);
    expect(((await wellFormed.json()) as { error: { code: string } }).error.code).toBe(plainError.code);
  });

  it('loads a family\'s MCP tool loop at the first request naming MCP servers; requests naming none never load it', async () => {
    const account = (await (await admin('/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'mcp-lazy@example.com' }) })).json()) as { id: string };
    const key = (await (await admin(`/admin/accounts/${account.id}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { key: string };
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const plain = await fetch(`${api}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'no-such-model', input: 'hi' }) });
    expect(plain.status).toBeGreaterThanOrEqual(400);
    expect(loadedModules().filter((url) => url.endsWith(AT_FIRST_USE.responsesMcp)), 'a request without MCP tools loads no MCP loop').toEqual([]);
    const tools = [{ type: 'mcp', server_label: 'nowhere', require_approval: 'never' }];
    const asking = await Promise.all([1, 2].map(() => fetch(`${api}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'no-such-model', input: 'hi', tools }) })));
    for (const answer of asking) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(((await answer.json()) as { error: { message: string } }).error.message).not.toBe('');
    }
    const loaded = loadedModules();
    expect(loaded.some((url) => url.endsWith(AT_FIRST_USE.responsesMcp)), 'the Responses MCP loop is loaded now').toBe(true);
    expect(loaded.filter((url) => url.endsWith(AT_FIRST_USE.messagesMcp)), 'the other family\'s loop is still not loaded').toEqual([]);
  });
});
