/**
 * A mock of Google Vertex AI with its OAuth token endpoint, strict like the real pair:
 * - `POST /token` takes the JWT-bearer grant, verifies the assertion's RS256 signature with the service account's
 *   public key and its claims (iss, aud = token_uri, cloud-platform scope, an hour at most), and issues
 *   `ya29.mock-N` tokens that expire after `tokenLifetimeSeconds`;
 * - `…/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent|streamGenerateContent` and
 *   `…/publishers/anthropic/models/{m}:rawPredict|streamRawPredict` need a live token (else 401 UNAUTHENTICATED),
 *   the expected project and location, and for Claude `anthropic_version: vertex-2023-10-16` with no `model`.
 * - `POST /v1/projects/{p}/locations/global/rankingConfigs/default_ranking_config:rank` is Vertex AI Search's
 *   ranking API: the same live token and project, `records` of `{ id, title?, content? }` (1 to 200, ids unique and
 *   non-empty, an unknown field refused), `topN`, `model`, `ignoreRecordDetailsInResponse`, `userLabels`; answered
 *   with `records` most relevant first, each score the rerank mocks' (the share of the query's words the record holds),
 *   and, as Google's JSON does, with a zero score's field left out.
 * Answers come from the strict Gemini and Anthropic mocks behind it, so they follow those mocks' rules.
 */
import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from './mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from './mock-gemini-upstream.js';
import { MockServerKit, type CommonFault, type RecordedRequest } from './mock-server-kit.js';
import { mockScore } from './mock-rerank-upstream.js';

export const MOCK_VERTEX_PROJECT = 'unigate-test-project';
const CLIENT_EMAIL = 'gateway@unigate-test-project.iam.gserviceaccount.com';
const GEMINI_KEY = 'vertex-backend-gemini';
const ANTHROPIC_KEY = 'vertex-backend-anthropic';

export type MockVertexFault = CommonFault | { kind: 'invalid-grant'; times?: number } | { kind: 'token-endpoint-down'; times?: number };

export interface MockVertexUpstream {
  url: string;
  tokenUri: string;
  /** The service-account key file that this mock's token endpoint accepts. */
  serviceAccount: Record<string, string>;
  /** Vertex requests (token requests are in `tokenRequests`). */
  requests: RecordedRequest[];
  tokenRequests: number;
  /** Every token issued so far stops working (as after a revocation). */
  revokeTokens(): void;
  setFault(fault: MockVertexFault | null): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

class GoogleError extends Error {
  constructor(readonly code: number, readonly status: string, message: string) {
    super(message);
  }
}

function sendGoogleError(res: ServerResponse, error: GoogleError): void {
  res.writeHead(error.code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code: error.code, message: error.message, status: error.status } }));
}

function decodeSegment(segment: string): Json {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Json;
}

function checkAssertion(assertion: string, publicKey: KeyObject, tokenUri: string): void {
  const [header = '', claims = '', signature = ''] = assertion.split('.');
  if (!verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature, 'base64url'))) throw new Error('invalid_grant: Invalid JWT Signature.');
  const head = decodeSegment(header);
  const body = decodeSegment(claims);
  if (head.alg !== 'RS256' || head.typ !== 'JWT') throw new Error('invalid_grant: unsupported JWT header');
  if (body.iss !== CLIENT_EMAIL) throw new Error('invalid_grant: Invalid issuer');
  if (body.aud !== tokenUri) throw new Error('invalid_grant: Invalid JWT audience');
  if (typeof body.scope !== 'string' || !body.scope.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) throw new Error('invalid_scope');
  if (typeof body.iat !== 'number' || typeof body.exp !== 'number' || body.exp <= body.iat || body.exp - body.iat > 3600) throw new Error('invalid_grant: Invalid JWT: Token must be a short-lived token (60 minutes)');
}

const RANK_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/rankingConfigs\/([^/:]+):rank$/;
const RANK_FIELDS = ['model', 'query', 'records', 'topN', 'ignoreRecordDetailsInResponse', 'userLabels'];
const RECORD_FIELDS = ['id', 'title', 'content'];

function invalid(message: string): GoogleError {
  return new GoogleError(400, 'INVALID_ARGUMENT', message);
}

/** The ranking API's answer to a checked body. */
function rank(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('Invalid JSON payload received.');
  const fields = body as Json;
  for (const field of Object.keys(fields)) if (!RANK_FIELDS.includes(field)) throw invalid(`Invalid JSON payload received. Unknown name "${field}": Cannot find field.`);
  const { model, query, records, topN, ignoreRecordDetailsInResponse } = fields;
  if (model !== undefined && (typeof model !== 'string' || !/^semantic-ranker-/.test(model))) throw invalid(`Unsupported model: ${String(model)}.`);
  if (typeof query !== 'string' || query === '') throw invalid('query is required.');
  if (!Array.isArray(records) || records.length === 0 || records.length > 200) throw invalid('records must hold 1 to 200 records.');
  if (topN !== undefined && (typeof topN !== 'number' || !Number.isInteger(topN))) throw invalid('topN must be an integer.');
  if (ignoreRecordDetailsInResponse !== undefined && typeof ignoreRecordDetailsInResponse !== 'boolean') throw invalid('ignoreRecordDetailsInResponse must be a boolean.');
  const ids = new Set<string>();
  const ranked = (records as unknown[]).map((record) => {
    if (typeof record !== 'object' || record === null) throw invalid('A record must be an object.');
    const entry = record as Json;
    for (const field of Object.keys(entry)) if (!RECORD_FIELDS.includes(field)) throw invalid(`Invalid JSON payload received. Unknown name "${field}" at 'records': Cannot find field.`);
    if (typeof entry.id !== 'string' || entry.id === '' || ids.has(entry.id)) throw invalid('Every record needs a unique non-empty id.');
    ids.add(entry.id);
    const title = typeof entry.title === 'string' ? entry.title : '';
    const content = typeof entry.content === 'string' ? entry.content : '';
    if (title === '' && content === '') throw invalid('A record needs a title or content.');
    return { id: entry.id, title, content, score: mockScore(query, `${title} ${content}`) };
  });
  ranked.sort((a, b) => b.score - a.score);
  const kept = typeof topN === 'number' && topN > 0 ? ranked.slice(0, topN) : ranked;
  return {
    records: kept.map(({ id, title, content, score }) => ({
      id,
      ...(score === 0 ? {} : { score }),
      ...(ignoreRecordDetailsInResponse === true ? {} : { ...(title === '' ? {} : { title }), ...(content === '' ? {} : { content }) }),
    })),
  };
}

const VERTEX_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

export async function startMockVertexUpstream(options: { tokenLifetimeSeconds?: number; location?: string } = {}): Promise<MockVertexUpstream> {
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const location = options.location ?? 'us-east5';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const gemini: MockGeminiUpstream = await startMockGeminiUpstream({ apiKey: GEMINI_KEY, recordRequests: false });
  const anthropic: MockAnthropicUpstream = await startMockAnthropicUpstream({ apiKey: ANTHROPIC_KEY, recordRequests: false });
  const kit = new MockServerKit<MockVertexFault>(false);
  const requests: RecordedRequest[] = [];
  const tokens = new Map<string, number>();
  let issued = 0;
  let tokenUri = '';
  const state = { tokenRequests: 0 };

  async function forward(res: ServerResponse, url: string, headers: Record<string, string>, body: string): Promise<void> {
    const answer = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    if (answer.body !== null) for await (const chunk of answer.body) res.write(chunk);
    res.end();
  }

  const { port } = await kit.listen({
    maxBodyBytes: 32 * 1024 * 1024,
    tooLarge: (_req, res) => sendGoogleError(res, new GoogleError(413, 'INVALID_ARGUMENT', 'Request payload size exceeds the limit.')),
    failed: (_req, res, error) => {
      if (res.headersSent) return void res.destroy();
      sendGoogleError(res, error instanceof GoogleError ? error : new GoogleError(500, 'INTERNAL', 'Internal error encountered.'));
    },
    async handle(req, res, rawBody) {
      const call = kit.intake(req, rawBody);
      const fault = kit.takeFault();
      if (!(await kit.beforeAnswer(req, res, fault, 0))) return;
      if (call.path === '/token') {
        state.tokenRequests += 1;
        if (fault?.kind === 'token-endpoint-down') throw new GoogleError(503, 'UNAVAILABLE', 'The service is currently unavailable.');
        const form = new URLSearchParams(rawBody);
        res.setHeader('content-type', 'application/json; charset=utf-8');
        try {
          if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') throw new Error('invalid_request: form body expected');
          if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Error('unsupported_grant_type');
          if (fault?.kind === 'invalid-grant') throw new Error('invalid_grant: Invalid grant: account not found');
          checkAssertion(form.get('assertion') ?? '', publicKey, tokenUri);
        } catch (error) {
          const [code, description = ''] = (error as Error).message.split(': ');
          res.writeHead(400);
          res.end(JSON.stringify({ error: code, error_description: description }));
          return;
        }
        issued += 1;
        const token = `ya29.mock-${issued}`;
        tokens.set(token, Date.now() + lifetime * 1000);
        res.writeHead(200);
        res.end(JSON.stringify({ access_token: token, expires_in: lifetime, token_type: 'Bearer' }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      requests.push({ method: call.method, path: call.path, url: call.url, headers, body: call.body, rawBody, receivedAt: Date.now() });
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const expiry = token === undefined ? undefined : tokens.get(token);
      if (expiry === undefined || expiry <= Date.now()) {
        throw new GoogleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
      }
      const ranking = RANK_ROUTE.exec(call.path);
      if (call.method === 'POST' && ranking !== null) {
        const [, project, where, config] = ranking;
        if (project !== MOCK_VERTEX_PROJECT) throw new GoogleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${String(project)}.`);
        if (where !== 'global' || config !== 'default_ranking_config') throw new GoogleError(404, 'NOT_FOUND', `RankingConfig ${String(config)} in ${String(where)} not found.`);
        if (call.jsonError) throw invalid('Invalid JSON payload received.');
        const answer = JSON.stringify(rank(call.body));
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(answer);
        return;
      }
      const match = VERTEX_ROUTE.exec(call.path);
      if (call.method !== 'POST' || match === null) throw new GoogleError(404, 'NOT_FOUND', 'The requested URL was not found on this server.');
      const [, project, where, publisher, model = '', method] = match;
      if (project !== MOCK_VERTEX_PROJECT) throw new GoogleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${String(project)}.`);
      if (where !== location) throw new GoogleError(400, 'FAILED_PRECONDITION', `Model ${model} is not served in location ${String(where)}.`);
      if (call.jsonError) throw new GoogleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      if (publisher === 'google') {
        if (method !== 'generateContent' && method !== 'streamGenerateContent') throw new GoogleError(400, 'INVALID_ARGUMENT', `Unknown method ${String(method)}.`);
        const sse = method === 'streamGenerateContent' && call.params.get('alt') === 'sse' ? '?alt=sse' : '';
        return forward(res, `${gemini.url}/v1beta/models/${model}:${method}${sse}`, { 'x-goog-api-key': GEMINI_KEY }, rawBody);
      }
      if (method !== 'rawPredict' && method !== 'streamRawPredict') throw new GoogleError(400, 'INVALID_ARGUMENT', `Unknown method ${String(method)}.`);
      const body = call.body as Json;
      if (body.anthropic_version !== 'vertex-2023-10-16') throw new GoogleError(400, 'INVALID_ARGUMENT', 'anthropic_version: vertex-2023-10-16 is required in the body.');
      if (body.model !== undefined) throw new GoogleError(400, 'INVALID_ARGUMENT', 'model: Extra inputs are not permitted (the model is in the URL).');
      if ((body.stream === true) !== (method === 'streamRawPredict')) throw new GoogleError(400, 'INVALID_ARGUMENT', 'streamRawPredict takes stream: true, rawPredict none.');
      const { anthropic_version: _version, ...messages } = body;
      return forward(res, `${anthropic.url}/v1/messages`, { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' }, JSON.stringify({ ...messages, model }));
    },
  });
  const url = `http://127.0.0.1:${port}`;
  tokenUri = `${url}/token`;
  return {
    url,
    tokenUri,
    serviceAccount: {
      type: 'service_account',
      project_id: MOCK_VERTEX_PROJECT,
      private_key_id: 'mock-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: CLIENT_EMAIL,
      client_id: '1234567890',
      token_uri: tokenUri,
    },
    requests,
    get tokenRequests() {
      return state.tokenRequests;
    },
    revokeTokens: () => tokens.clear(),
    setFault: (fault) => kit.setFault(fault),
    close: async () => {
      await kit.close();
      await Promise.all([gemini.close(), anthropic.close()]);
    },
  };
}
