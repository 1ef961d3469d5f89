/**
 * POST /v1/rerank (and Cohere's own /v2/rerank) over the wire: the official Cohere SDK straight at the mock Cohere
 * upstream (fidelity) and through the gateway to Cohere, Jina, Voyage, Bedrock's Rerank API (SigV4-signed), Vertex AI
 * Search's ranking API (OAuth), an OpenAI-compatible server with Jina's shape and one speaking TEI's own; billing to the
 * nano-dollar per search unit and per token; failover when a channel answers 500; validation; the key's allowlist.
 */
import { CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { mockScore, mockTokens, startMockRerankUpstream, type MockRerankUpstream } from '../../support/mock-rerank-upstream.js';
import { startMockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { MOCK_AWS_CREDENTIALS, MOCK_BEDROCK_REGION, startMockBedrockUpstream, type MockBedrockUpstream } from '../../support/mock-bedrock-upstream.js';
import { MOCK_VERTEX_PROJECT, startMockVertexUpstream, type MockVertexUpstream } from '../../support/mock-vertex-upstream.js';
import { estimateTextTokens } from '../../../src/shared/estimate-tokens.js';

const QUERY = 'What is the capital of the United States?';
const DOCUMENTS = [
  'Carson City is the capital city of the American state of Nevada.',
  'The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean. Its capital is Saipan.',
  'Washington, D.C. is the capital of the United States. It is a federal district.',
  'Capital punishment has existed in the United States since before the United States was a country.',
];
/** The mock's order for QUERY over DOCUMENTS: highest score first, ties by index. */
const EXPECTED_ORDER = DOCUMENTS.map((text, index) => ({ index, score: mockScore(QUERY, text) }))
  .sort((a, b) => b.score - a.score || a.index - b.index)
  .map((entry) => entry.index);
/** Jina's and Voyage's count: the query read with each document, plus every document. */
const MOCK_TOTAL_TOKENS = mockTokens(QUERY) * DOCUMENTS.length + DOCUMENTS.reduce((sum, text) => sum + mockTokens(text), 0);

interface UsageRow {
  request_id: string;
  model: string | null;
  protocol: string;
  endpoint: string;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  cost_usd: number;
  cost_nano?: string;
  attempts: number;
}

let gateway: TestGateway;
let cohereA: MockRerankUpstream;
let cohereB: MockRerankUpstream;
let jina: MockRerankUpstream;
let voyage: MockRerankUpstream;
let bedrock: MockBedrockUpstream;
let vertex: MockVertexUpstream;
let tei: MockRerankUpstream;
let account: SeededAccount;

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const answer = await gateway.admin(method as 'POST', path, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

async function usageRow(requestId: string | null): Promise<UsageRow> {
  await flushWrites(gateway);
  const usage = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
  const row = usage.body.data.find((entry) => entry.request_id === requestId);
  if (row === undefined) throw new Error(`no usage row for ${String(requestId)}`);
  return row;
}

async function postRerank(body: unknown, key = account.key, path = '/v1/rerank'): Promise<{ status: number; body: Record<string, unknown>; requestId: string | null; cost: string | null }> {
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, requestId: response.headers.get('x-request-id'), cost: response.headers.get('x-request-cost-usd') };
}

beforeAll(async () => {
  [cohereA, cohereB, jina, voyage, bedrock, vertex, tei] = await Promise.all([
    startMockRerankUpstream('cohere'), startMockRerankUpstream('cohere'), startMockRerankUpstream('jina'), startMockRerankUpstream('voyage'), startMockBedrockUpstream(),
    startMockVertexUpstream(), startMockRerankUpstream('tei'),
  ]);
  gateway = await startTestGateway();
  await admin('POST', '/admin/models', { id: 'rerank-cohere', kind: 'rerank', pricing: { per_search_unit: 0.002 } });
  await admin('POST', '/admin/models', { id: 'rerank-jina', kind: 'rerank', pricing: { input_per_mtok: 0.02 } });
  await admin('POST', '/admin/models', { id: 'rerank-voyage', kind: 'rerank', pricing: { input_per_mtok: 0.05 } });
  await admin('POST', '/admin/models', { id: 'rerank-local', kind: 'rerank', pricing: { per_search_unit: 0.001 } });
  await admin('POST', '/admin/models', { id: 'chat-model', kind: 'chat', pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  // cohere-a is tried first (higher priority); cohere-b is its fallback.
  await admin('POST', '/admin/channels', { name: 'cohere-a', type: 'cohere', base_url: cohereA.url, api_key: 'cohere-upstream-key', priority: 10, models: { 'rerank-cohere': 'rerank-v3.5' } });
  await admin('POST', '/admin/channels', { name: 'cohere-b', type: 'cohere', base_url: cohereB.url, api_key: 'cohere-upstream-key', priority: 0, models: { 'rerank-cohere': 'rerank-v3.5' } });
  await admin('POST', '/admin/channels', { name: 'jina', type: 'jina', base_url: jina.url, api_key: 'jina-upstream-key', models: { 'rerank-jina': 'jina-reranker-v2-base-multilingual' } });
  await admin('POST', '/admin/channels', { name: 'voyage', type: 'voyage', base_url: voyage.url, api_key: 'voyage-upstream-key', models: { 'rerank-voyage': 'rerank-2.5' } });
  // A self-hosted server that copies Jina's /v1/rerank, on an openai-compatible channel.
  await admin('POST', '/admin/channels', { name: 'local', type: 'openai-compatible', base_url: jina.url, api_key: 'jina-upstream-key', models: { 'rerank-local': 'bge-reranker-v2-m3' } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([cohereA, cohereB, jina, voyage, bedrock, vertex, tei].map((mock) => mock?.close()));
});

describe('the mock Cohere upstream speaks Cohere', () => {
  it('answers the official SDK pointed straight at it', async () => {
    const client = new CohereClientV2({ token: 'cohere-upstream-key', environment: cohereA.url });
    const answer = await client.rerank({ model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS, topN: 2 });
    expect(answer.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 2));
    expect(answer.meta?.billedUnits?.searchUnits).toBe(1);
    expect(cohereA.requests.at(-1)).toMatchObject({ path: '/v2/rerank', body: { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS, top_n: 2 } });
  });
});

describe('POST /v2/rerank and /v1/rerank through the gateway with the Cohere SDK', () => {
  it('Cohere upstream: v2 client, billed by the search units Cohere reports', async () => {
    const client = new CohereClientV2({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS, topN: 3, maxTokensPerDoc: 512 }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 3));
    expect(data.results[0]?.relevanceScore).toBeCloseTo(mockScore(QUERY, DOCUMENTS[EXPECTED_ORDER[0] ?? 0] ?? ''), 9);
    expect(data.meta?.billedUnits?.searchUnits).toBe(1);
    expect(cohereA.requests.at(-1)).toMatchObject({
      path: '/v2/rerank',
      headers: { authorization: 'Bearer cohere-upstream-key' },
      body: { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS, top_n: 3, max_tokens_per_doc: 512 },
    });
    const row = await usageRow(rawResponse.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'rerank-cohere', protocol: 'rerank', endpoint: '/v2/rerank', attempts: 1 });
    // One search unit at $0.002 = 2 000 000 nano-USD.
    expect(rawResponse.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(row.cost_usd).toBe(0.002);
  });

  it('Jina upstream: v1 client with documents returned, billed per token as Jina counts them', async () => {
    const client = new CohereClient({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-jina', query: QUERY, documents: DOCUMENTS.map((text) => ({ text })), returnDocuments: true }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER);
    expect(data.results.map((result) => result.document?.text)).toEqual(EXPECTED_ORDER.map((index) => DOCUMENTS[index]));
    // Documents go to Jina as strings, and none come back twice: the gateway adds the text from the request.
    expect(jina.requests.at(-1)).toMatchObject({ path: '/v1/rerank', body: { model: 'jina-reranker-v2-base-multilingual', query: QUERY, documents: DOCUMENTS, return_documents: false } });
    const raw = await postRerank({ model: 'rerank-jina', query: QUERY, documents: DOCUMENTS });
    expect((raw.body.usage as { total_tokens: number }).total_tokens).toBe(MOCK_TOTAL_TOKENS);
    // ceil(tokens × $0.02 per million) in nano-USD.
    const nano = (BigInt(MOCK_TOTAL_TOKENS) * 20_000_000n + 999_999n) / 1_000_000n;
    const row = await usageRow(rawResponse.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'rerank-jina', protocol: 'rerank', endpoint: '/v1/rerank', prompt_tokens: MOCK_TOTAL_TOKENS });
    expect(row.cost_usd).toBeCloseTo(Number(nano) / 1e9, 12);
    expect(raw.cost).toBe((Number(nano) / 1e9).toString());
  });

  it('Voyage upstream: top_n sent as top_k, results read from data', async () => {
    const client = new CohereClientV2({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-voyage', query: QUERY, documents: DOCUMENTS, topN: 2 }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 2));
    expect(voyage.requests.at(-1)).toMatchObject({ path: '/v1/rerank', body: { model: 'rerank-2.5', query: QUERY, documents: DOCUMENTS, top_k: 2, return_documents: false } });
    const nano = (BigInt(MOCK_TOTAL_TOKENS) * 50_000_000n + 999_999n) / 1_000_000n;
    expect((await usageRow(rawResponse.headers.get('x-request-id'))).cost_usd).toBeCloseTo(Number(nano) / 1e9, 12);
  });

  it('OpenAI-compatible server with Jina’s /v1/rerank: billed per search unit by Cohere’s rule', async () => {
    const answer = await postRerank({ model: 'rerank-local', query: QUERY, documents: DOCUMENTS, top_n: 1, return_documents: true });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      results: [{ index: EXPECTED_ORDER[0], document: { text: DOCUMENTS[EXPECTED_ORDER[0] ?? 0] } }],
      meta: { billed_units: { search_units: 1 } },
      usage: { total_tokens: MOCK_TOTAL_TOKENS },
    });
    expect(typeof answer.body.id).toBe('string');
    expect(jina.requests.at(-1)).toMatchObject({ path: '/v1/rerank', body: { model: 'bge-reranker-v2-m3', top_n: 1 } });
    expect((await usageRow(answer.requestId)).cost_usd).toBe(0.001);
  });
});

describe('Bedrock\'s Rerank API', () => {
  const credentials = { access_key_id: MOCK_AWS_CREDENTIALS.accessKeyId, secret_access_key: MOCK_AWS_CREDENTIALS.secretAccessKey, session_token: MOCK_AWS_CREDENTIALS.sessionToken };
  const bedrockBody = (modelArn: string, numberOfResults: number, documents = DOCUMENTS): unknown => ({
    queries: [{ type: 'TEXT', textQuery: { text: QUERY } }],
    sources: documents.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
    rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: { modelConfiguration: { modelArn }, numberOfResults } },
  });

  beforeAll(async () => {
    // Amazon Rerank at $1 per 1 000 queries, Cohere Rerank 3.5 on Bedrock at $2 per 1 000: a query is a search unit.
    await admin('POST', '/admin/models', { id: 'rerank-bedrock-amazon', kind: 'rerank', pricing: { per_search_unit: 0.001 } });
    await admin('POST', '/admin/models', { id: 'rerank-bedrock-cohere', kind: 'rerank', pricing: { per_search_unit: 0.002 } });
    // One channel on the mock as its base URL (chat and rerank on one endpoint), one reaching it only for reranks.
    await admin('POST', '/admin/channels', { name: 'bedrock-base', type: 'bedrock', base_url: bedrock.url, credentials, settings: { region: MOCK_BEDROCK_REGION }, models: { 'rerank-bedrock-amazon': 'amazon.rerank-v1:0' } });
    await admin('POST', '/admin/channels', {
      name: 'bedrock-rerank-url', type: 'bedrock', credentials, settings: { region: MOCK_BEDROCK_REGION, rerank_base_url: bedrock.url },
      models: { 'rerank-bedrock-cohere': `arn:aws:bedrock:${MOCK_BEDROCK_REGION}::foundation-model/cohere.rerank-v3-5:0` },
    });
    await gateway.gateway.services.catalog.reload();
  });

  it('Bedrock upstream: the Cohere SDK\'s request sent to /rerank signed with SigV4, billed one query per search unit', async () => {
    const client = new CohereClient({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-bedrock-amazon', query: QUERY, documents: DOCUMENTS.map((text) => ({ text })), topN: 2, returnDocuments: true }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 2));
    expect(data.results.map((result) => result.document?.text)).toEqual(EXPECTED_ORDER.slice(0, 2).map((index) => DOCUMENTS[index]));
    expect(data.results[0]?.relevanceScore).toBeCloseTo(mockScore(QUERY, DOCUMENTS[EXPECTED_ORDER[0] ?? 0] ?? ''), 9);
    expect(data.meta?.billedUnits?.searchUnits).toBe(1);
    const sent = bedrock.requests.at(-1);
    expect(sent).toMatchObject({ path: '/rerank', body: bedrockBody(`arn:aws:bedrock:${MOCK_BEDROCK_REGION}::foundation-model/amazon.rerank-v1:0`, 2) });
    expect(String(sent?.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCKBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    const row = await usageRow(rawResponse.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'rerank-bedrock-amazon', protocol: 'rerank', endpoint: '/v1/rerank', attempts: 1 });
    // One search unit at $0.001 = 1 000 000 nano-USD.
    expect(rawResponse.headers.get('x-request-cost-usd')).toBe('0.001');
    expect(row.cost_usd).toBe(0.001);
  });

  it('Bedrock upstream: a model named by ARN at settings.rerank_base_url, every result asked for, 101 documents two queries', async () => {
    const answer = await postRerank({ model: 'rerank-bedrock-cohere', query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(200);
    expect((answer.body.results as Array<{ index: number }>).map((result) => result.index)).toEqual(EXPECTED_ORDER);
    expect(bedrock.requests.at(-1)).toMatchObject({ path: '/rerank', body: bedrockBody(`arn:aws:bedrock:${MOCK_BEDROCK_REGION}::foundation-model/cohere.rerank-v3-5:0`, DOCUMENTS.length) });
    expect((await usageRow(answer.requestId)).cost_usd).toBe(0.002);

    const documents = Array.from({ length: 101 }, (_unused, index) => `document number ${index} about the capital`);
    const many = await postRerank({ model: 'rerank-bedrock-cohere', query: QUERY, documents, top_n: 3 });
    expect(many.status).toBe(200);
    expect(many.body).toMatchObject({ meta: { billed_units: { search_units: 2 } } });
    expect((many.body.results as unknown[]).length).toBe(3);
    expect((await usageRow(many.requestId)).cost_usd).toBe(0.004);
  });

  it('refuses a rerank endpoint that is not a plain http(s) URL', async () => {
    for (const rerankBaseUrl of ['ftp://example.com', 'https://user:secret@example.com', 42]) {
      const refused = await gateway.admin('POST', '/admin/channels', { name: 'bedrock-bad', type: 'bedrock', credentials, settings: { region: MOCK_BEDROCK_REGION, rerank_base_url: rerankBaseUrl }, models: { 'rerank-bedrock-amazon': 'amazon.rerank-v1:0' } });
      expect(refused.status, String(rerankBaseUrl)).toBe(400);
      expect(refused.body).toMatchObject({ error: { param: 'settings.rerank_base_url' } });
    }
  });
});

describe('Vertex AI Search\'s ranking API on a vertex-ai channel', () => {
  const rankPath = `/v1/projects/${MOCK_VERTEX_PROJECT}/locations/global/rankingConfigs/default_ranking_config:rank`;

  beforeAll(async () => {
    // Google's ranking API at $1 per 1 000 queries of up to 100 records: a query is a search unit.
    await admin('POST', '/admin/models', { id: 'rerank-vertex', kind: 'rerank', pricing: { per_search_unit: 0.001 } });
    // The channel's base URL is its chat endpoint (a region); reranks reach the mock through settings.rerank_base_url.
    await admin('POST', '/admin/channels', {
      name: 'vertex-ranking', type: 'vertex-ai', base_url: 'http://127.0.0.1:9', credentials: vertex.serviceAccount,
      settings: { location: 'us-east5', rerank_base_url: vertex.url }, models: { 'rerank-vertex': 'semantic-ranker-default-004' },
    });
    await gateway.gateway.services.catalog.reload();
  });

  it('the Cohere SDK\'s request sent as records with the service account\'s token, mapped back by index, one query billed', async () => {
    const client = new CohereClientV2({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-vertex', query: QUERY, documents: DOCUMENTS, topN: 2 }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 2));
    expect(data.results[0]?.relevanceScore).toBeCloseTo(mockScore(QUERY, DOCUMENTS[EXPECTED_ORDER[0] ?? 0] ?? ''), 9);
    expect(data.meta?.billedUnits?.searchUnits).toBe(1);
    const sent = vertex.requests.at(-1);
    expect(sent).toMatchObject({
      path: rankPath,
      body: { model: 'semantic-ranker-default-004', query: QUERY, records: DOCUMENTS.map((content, index) => ({ id: String(index), content })), topN: 2, ignoreRecordDetailsInResponse: true },
    });
    expect(String(sent?.headers.authorization)).toMatch(/^Bearer ya29\.mock-\d+$/);
    const row = await usageRow(rawResponse.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'rerank-vertex', protocol: 'rerank', endpoint: '/v2/rerank', attempts: 1 });
    expect(rawResponse.headers.get('x-request-cost-usd')).toBe('0.001');
    expect(row.cost_usd).toBe(0.001);
  });

  it('documents returned from the request, a zero score read as 0, 150 records billed as two queries', async () => {
    const answer = await postRerank({ model: 'rerank-vertex', query: QUERY, documents: [...DOCUMENTS, 'nothing relevant here'], return_documents: true });
    expect(answer.status).toBe(200);
    const results = answer.body.results as Array<{ index: number; relevance_score: number; document: { text: string } }>;
    expect(results.map((result) => result.index)).toEqual([...EXPECTED_ORDER, DOCUMENTS.length]);
    expect(results.at(-1)).toMatchObject({ relevance_score: 0, document: { text: 'nothing relevant here' } });
    expect(results[0]?.document.text).toBe(DOCUMENTS[EXPECTED_ORDER[0] ?? 0]);
    expect((await usageRow(answer.requestId)).cost_usd).toBe(0.001);

    const documents = Array.from({ length: 150 }, (_unused, index) => `document number ${index} about the capital`);
    const many = await postRerank({ model: 'rerank-vertex', query: QUERY, documents, top_n: 3 });
    expect(many.status).toBe(200);
    expect(many.body).toMatchObject({ meta: { billed_units: { search_units: 2 } } });
    expect((many.body.results as unknown[]).length).toBe(3);
    expect((await usageRow(many.requestId)).cost_usd).toBe(0.002);
  });

  it('a revoked token is renewed once and the rank retried; a refused rank (400) bills nothing', async () => {
    const tokensBefore = vertex.tokenRequests;
    vertex.revokeTokens();
    const renewed = await postRerank({ model: 'rerank-vertex', query: QUERY, documents: DOCUMENTS });
    expect(renewed.status).toBe(200);
    expect(vertex.tokenRequests).toBe(tokensBefore + 1);
    // More records than the ranking API takes in one request: Google's 400 is the caller's error object.
    const tooMany = await postRerank({ model: 'rerank-vertex', query: QUERY, documents: Array.from({ length: 201 }, (_unused, index) => `record ${index}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(await usageRow(tooMany.requestId)).toMatchObject({ status: 400, cost_usd: 0 });
  });

  it('a channel listing only the rerank model is tested with a one-record rank, never a chat', async () => {
    const channels = await gateway.admin<{ data: Array<{ id: string; name: string; models: Record<string, string> }> }>('GET', '/admin/channels');
    const channel = channels.body.data.find((entry) => entry.name === 'vertex-ranking');
    expect(channel?.models).toEqual({ 'rerank-vertex': 'semantic-ranker-default-004' });
    // The channel's chat endpoint (its base URL) is a dead port: a chat test could only fail.
    const before = vertex.requests.length;
    const tested = await gateway.admin<Record<string, unknown>>('POST', `/admin/channels/${channel?.id ?? ''}/test`);
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, outcome: 'success', model: 'rerank-vertex', upstream_model: 'semantic-ranker-default-004', upstream_status: 200 });
    expect(vertex.requests.slice(before).map((request) => request.path)).toEqual([rankPath]);
    expect(vertex.requests.at(-1)?.body).toMatchObject({ model: 'semantic-ranker-default-004', query: 'ping', records: [{ id: '0', content: 'ping' }] });
    // Named explicitly, the same.
    const named = await gateway.admin<Record<string, unknown>>('POST', `/admin/channels/${channel?.id ?? ''}/test`, { model: 'rerank-vertex' });
    expect(named.body).toMatchObject({ ok: true, outcome: 'success' });
    expect(vertex.requests.at(-1)?.path).toBe(rankPath);
  });

  it('refuses a ranking URL that is not a plain http(s) URL', async () => {
    const refused = await gateway.admin('POST', '/admin/channels', { name: 'vertex-bad', type: 'vertex-ai', credentials: vertex.serviceAccount, settings: { rerank_base_url: 'https://user:pw@example.com' }, models: { 'rerank-vertex': 'semantic-ranker-default-004' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { param: 'settings.rerank_base_url' } });
  });
});

describe('text-embeddings-inference\'s own /rerank on an openai-compatible channel', () => {
  /** The gateway's count when an upstream reports none: the query read with each document, plus every document. */
  const estimated = (documents: readonly string[]): number => estimateTextTokens(QUERY) * documents.length + documents.reduce((sum, text) => sum + estimateTextTokens(text), 0);

  beforeAll(async () => {
    await admin('POST', '/admin/models', { id: 'rerank-tei', kind: 'rerank', pricing: { input_per_mtok: 0.03 } });
    // The base URL is TEI's OpenAI front (…/v1); its own rerank is at the root.
    await admin('POST', '/admin/channels', { name: 'tei', type: 'openai-compatible', base_url: tei.url, api_key: 'tei-upstream-key', settings: { rerank_api: 'tei' }, models: { 'rerank-tei': 'BAAI/bge-reranker-large' } });
    await gateway.gateway.services.catalog.reload();
  });

  it('sends texts to <root>/rerank, cuts to top_n, adds the documents back, and bills the tokens it counts itself', async () => {
    const client = new CohereClient({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-tei', query: QUERY, documents: DOCUMENTS.map((text) => ({ text })), topN: 2, returnDocuments: true }).withRawResponse();
    expect(data.results.map((result) => result.index)).toEqual(EXPECTED_ORDER.slice(0, 2));
    expect(data.results.map((result) => result.document?.text)).toEqual(EXPECTED_ORDER.slice(0, 2).map((index) => DOCUMENTS[index]));
    expect(tei.requests.at(-1)).toMatchObject({
      path: '/rerank',
      headers: { authorization: 'Bearer tei-upstream-key' },
      body: { query: QUERY, texts: DOCUMENTS, raw_scores: false, return_text: false, truncate: true },
    });
    const tokens = estimated(DOCUMENTS);
    const nano = (BigInt(tokens) * 30_000_000n + 999_999n) / 1_000_000n;
    const row = await usageRow(rawResponse.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'rerank-tei', protocol: 'rerank', prompt_tokens: tokens });
    expect(row.cost_usd).toBeCloseTo(Number(nano) / 1e9, 12);
    expect(rawResponse.headers.get('x-request-cost-usd')).toBe((Number(nano) / 1e9).toString());
  });

  it('settings.rerank_base_url overrides the root; an unknown rerank_api is refused', async () => {
    await admin('POST', '/admin/models', { id: 'rerank-tei-2', kind: 'rerank', pricing: { input_per_mtok: 0.03 } });
    await admin('POST', '/admin/channels', { name: 'tei-elsewhere', type: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', api_key: 'tei-upstream-key', settings: { rerank_api: 'tei', rerank_base_url: tei.url.replace(/\/v1$/, '') }, models: { 'rerank-tei-2': 'x' } });
    await gateway.gateway.services.catalog.reload();
    const answer = await postRerank({ model: 'rerank-tei-2', query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(200);
    expect((answer.body.results as Array<{ index: number }>).map((result) => result.index)).toEqual(EXPECTED_ORDER);
    const refused = await gateway.admin('POST', '/admin/channels', { name: 'tei-bad', type: 'openai-compatible', base_url: tei.url, api_key: 'k', settings: { rerank_api: 'cohere' }, models: { 'rerank-tei': 'x' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { param: 'settings.rerank_api' } });
  });
});

describe('routing and money', () => {
  it('fails over to the second Cohere channel when the first answers 500', async () => {
    const before = cohereB.requests.length;
    cohereA.setFault({ kind: 'status', status: 500, times: 1 });
    const client = new CohereClientV2({ token: account.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS }).withRawResponse();
    expect(data.results).toHaveLength(DOCUMENTS.length);
    expect(cohereB.requests.length).toBe(before + 1);
    expect(await usageRow(rawResponse.headers.get('x-request-id'))).toMatchObject({ status: 200, attempts: 2, cost_usd: 0.002 });
  });

  it('an upstream 400 (the caller\'s request) is answered as the error object, not retried, and bills nothing', async () => {
    const before = cohereB.requests.length;
    cohereA.setFault({ kind: 'status', status: 400, times: 1 });
    const answer = await postRerank({ model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { message: expect.any(String) as unknown, type: 'invalid_request_error' } });
    expect(cohereB.requests.length).toBe(before);
    expect(await usageRow(answer.requestId)).toMatchObject({ status: 400, cost_usd: 0 });
  });

  it('bills 2 search units for 101 documents, and holds the worst case before forwarding', async () => {
    const documents = Array.from({ length: 101 }, (_unused, index) => `document number ${index} about the capital`);
    const answer = await postRerank({ model: 'rerank-cohere', query: QUERY, documents });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ meta: { billed_units: { search_units: 2 } } });
    expect((await usageRow(answer.requestId)).cost_usd).toBe(0.004);
    // An account that cannot pay the worst case is refused before any upstream is asked.
    const poor = await seedAccount(gateway, { balanceUsd: 0.001 });
    const sent = cohereA.requests.length + cohereB.requests.length;
    const refused = await postRerank({ model: 'rerank-cohere', query: QUERY, documents }, poor.key);
    expect(refused.status).toBe(402);
    expect(cohereA.requests.length + cohereB.requests.length).toBe(sent);
  });

  it('refuses a key whose allowlist excludes the model', async () => {
    const limited = await seedAccount(gateway, { key: { allowed_models: ['rerank-jina'] } });
    const refused = await postRerank({ model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS }, limited.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'model_not_allowed' } });
    const client = new CohereClientV2({ token: limited.key, environment: gateway.url });
    const error = await client.rerank({ model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CohereError);
    expect((error as CohereError).statusCode).toBe(403);
    expect((await postRerank({ model: 'rerank-jina', query: QUERY, documents: DOCUMENTS }, limited.key)).status).toBe(200);
  });
});

describe('channels of the rerank-only types', () => {
  it('are tested with a one-document rerank, and refuse chat as a model set up wrong', async () => {
    const channels = await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/channels');
    for (const [name, mock] of [['cohere-a', cohereA], ['jina', jina], ['voyage', voyage]] as const) {
      const id = channels.body.data.find((channel) => channel.name === name)?.id ?? '';
      const tested = await gateway.admin<{ ok: boolean }>('POST', `/admin/channels/${id}/test`);
      expect(tested.body, name).toMatchObject({ ok: true });
      expect(mock.requests.at(-1)?.body, name).toMatchObject({ query: 'ping', documents: ['ping'] });
    }
    await admin('POST', '/admin/models', { id: 'chat-on-cohere', kind: 'chat', pricing: { input_per_mtok: 1 } });
    await admin('PATCH', `/admin/channels/${channels.body.data.find((channel) => channel.name === 'jina')?.id ?? ''}`, { models: { 'rerank-jina': 'jina-reranker-v2-base-multilingual', 'chat-on-cohere': 'x' } });
    await gateway.gateway.services.catalog.reload();
    const chat = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-on-cohere', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(400);
    expect(await chat.json()).toMatchObject({ error: { param: 'model', message: expect.stringContaining('rerank requests only') as unknown } });
  });

  it('are passed over for chat when the model has a channel that chats, even one of lower priority', async () => {
    const openai = await startMockOpenAIUpstream();
    try {
      await admin('POST', '/admin/models', { id: 'chat-beside-rerank', kind: 'chat', pricing: { input_per_mtok: 1 } });
      await admin('POST', '/admin/channels', { name: 'cohere-first', type: 'cohere', base_url: cohereA.url, api_key: 'cohere-upstream-key', priority: 100, models: { 'chat-beside-rerank': 'x' } });
      await admin('POST', '/admin/channels', { name: 'openai-last', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', priority: 0, models: { 'chat-beside-rerank': 'gpt-4o-mini' } });
      await gateway.gateway.services.catalog.reload();
      const cohereRequests = cohereA.requests.length;
      const chat = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat-beside-rerank', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      expect(openai.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(1);
      expect(cohereA.requests.length).toBe(cohereRequests);
    } finally {
      await openai.close();
    }
  });
});

describe('validation: 400 with the error object, nothing sent upstream', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no model', { query: QUERY, documents: DOCUMENTS }, 'model'],
    ['no query', { model: 'rerank-cohere', documents: DOCUMENTS }, 'query'],
    ['blank query', { model: 'rerank-cohere', query: '  ', documents: DOCUMENTS }, 'query'],
    ['query too long', { model: 'rerank-cohere', query: 'x'.repeat(32_001), documents: DOCUMENTS }, 'query'],
    ['no documents', { model: 'rerank-cohere', query: QUERY, documents: [] }, 'documents'],
    ['documents not a list', { model: 'rerank-cohere', query: QUERY, documents: 'one' }, 'documents'],
    ['a number among documents', { model: 'rerank-cohere', query: QUERY, documents: ['a', 2] }, 'documents[1]'],
    ['an object without text', { model: 'rerank-cohere', query: QUERY, documents: [{ title: 'a' }] }, 'documents[0]'],
    ['too many documents', { model: 'rerank-cohere', query: QUERY, documents: Array.from({ length: 1001 }, () => 'a') }, 'documents'],
    ['top_n zero', { model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS, top_n: 0 }, 'top_n'],
    ['top_n fractional', { model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS, top_n: 1.5 }, 'top_n'],
    ['return_documents not boolean', { model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS, return_documents: 'yes' }, 'return_documents'],
    ['max_tokens_per_doc zero', { model: 'rerank-cohere', query: QUERY, documents: DOCUMENTS, max_tokens_per_doc: 0 }, 'max_tokens_per_doc'],
  ];
  it.each(cases)('%s', async (_name, body, param) => {
    const sent = cohereA.requests.length + cohereB.requests.length;
    const answer = await postRerank(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { type: 'invalid_request_error', param } });
    expect(typeof (answer.body.error as { message: unknown }).message).toBe('string');
    expect(cohereA.requests.length + cohereB.requests.length).toBe(sent);
  });

  it('a chat model is not found for rerank, an unknown model likewise', async () => {
    const chat = await postRerank({ model: 'chat-model', query: QUERY, documents: DOCUMENTS });
    expect(chat.status).toBe(400);
    expect(chat.body).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
    expect((await postRerank({ model: 'no-such-reranker', query: QUERY, documents: DOCUMENTS })).body).toMatchObject({ error: { code: 'model_not_found' } });
  });

  it('a top_n past the number of documents returns them all', async () => {
    const answer = await postRerank({ model: 'rerank-voyage', query: QUERY, documents: DOCUMENTS, top_n: 50 });
    expect((answer.body.results as unknown[]).length).toBe(DOCUMENTS.length);
    expect(voyage.requests.at(-1)?.body).toMatchObject({ top_k: DOCUMENTS.length });
  });
});

describe('malformed bodies', () => {
  it('any value in any field is answered below 500, an error always being the spec object', async () => {
    const field = fc.oneof(fc.anything(), fc.constantFrom(undefined, null, '', 'rerank-voyage', -1, 0, 1.5, 1e12, [], {}, [{ text: 1 }], ['a', { text: 'b' }]));
    await fc.assert(
      fc.asyncProperty(fc.record({ model: fc.oneof(field, fc.constant('rerank-voyage')), query: field, documents: fc.oneof(field, fc.constant(DOCUMENTS)), top_n: field, return_documents: field, max_tokens_per_doc: field }, { requiredKeys: [] }), async (body) => {
        const answer = await postRerank(body);
        expect(answer.status).toBeLessThan(500);
        if (answer.status !== 200) expect(answer.body).toMatchObject({ error: { message: expect.any(String) as unknown, type: expect.any(String) as unknown } });
      }),
      { numRuns: 150, seed: 20261206 },
    );
  });
});
