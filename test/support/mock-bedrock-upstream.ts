/**
 * A mock of the Amazon Bedrock runtime's Converse and ConverseStream APIs (and the Agents runtime's Rerank, at
 * `POST /rerank` on the same port), strict like the real service: every
 * request must carry a valid SigV4 signature (or a Bedrock API key), bodies are validated as Bedrock validates
 * them, and streams are AWS binary event streams. The AWS SDK's BedrockRuntimeClient accepts it (see its test).
 *
 * Answers: with tools, when the last user turn has no tool results and either a tool is forced or the text mentions
 * "weather", a toolUse of the chosen (or first) tool with every required string property set to "Paris"; after tool
 * results `Tool result received: <result text>`; otherwise `Echo: <last user text>`. With
 * `additionalModelRequestFields.thinking` a signed reasoning block comes first. Tokens: about four characters each.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { bedrockEvent, bedrockException } from './event-stream-encoder.js';
import { MockServerKit, type CommonFault, type RecordedRequest } from './mock-server-kit.js';
import { mockScore } from './mock-rerank-upstream.js';

export const MOCK_AWS_CREDENTIALS = { accessKeyId: 'AKIAMOCKBEDROCK00001', secretAccessKey: 'mockSecretKey/For+BedrockTests0000000000', sessionToken: 'mock-session-token' };
export const MOCK_BEDROCK_API_KEY = 'ABSKbW9jay1iZWRyb2NrLWFwaS1rZXk=';
export const MOCK_BEDROCK_REGION = 'us-east-1';

export type MockBedrockFault = CommonFault | { kind: 'throttle'; times?: number } | { kind: 'stream-exception'; times?: number } | { kind: 'corrupt-stream'; times?: number };

export interface MockBedrockUpstream {
  url: string;
  requests: RecordedRequest[];
  setFault(fault: MockBedrockFault | null): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

class BedrockError extends Error {
  constructor(readonly status: number, readonly type: string, message: string) {
    super(message);
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const validation = (message: string): BedrockError => new BedrockError(400, 'ValidationException', message);

class Sha256 {
  #hash: Hash | Hmac;
  readonly #key: Buffer | null;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#key = secret === undefined ? null : typeof secret === 'string' ? Buffer.from(secret) : ArrayBuffer.isView(secret) ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength) : Buffer.from(secret);
    this.#hash = this.#create();
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest());
  }
  reset(): void {
    this.#hash = this.#create();
  }
  #create(): Hash | Hmac {
    return this.#key === null ? createHash('sha256') : createHmac('sha256', this.#key);
  }
}

/** Recomputes the SigV4 signature over the signed headers, the path as received and the body. */
async function verifySignature(req: IncomingMessage, rawBody: string): Promise<void> {
  const header = req.headers.authorization ?? '';
  if (header === `Bearer ${MOCK_BEDROCK_API_KEY}`) return;
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(header);
  if (match === null) throw new BedrockError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
  const [, accessKeyId, , region, service, signedHeaders = '', signature] = match;
  if (accessKeyId !== MOCK_AWS_CREDENTIALS.accessKeyId) throw new BedrockError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (service !== 'bedrock' || region !== MOCK_BEDROCK_REGION) throw new BedrockError(403, 'InvalidSignatureException', `Credential should be scoped to a valid region and service 'bedrock'.`);
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const date = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (Number.isNaN(date.getTime()) || Math.abs(Date.now() - date.getTime()) > 5 * 60_000) throw new BedrockError(403, 'InvalidSignatureException', 'Signature expired or x-amz-date missing.');
  const token = req.headers['x-amz-security-token'];
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    const value = req.headers[name];
    if (value === undefined) throw new BedrockError(403, 'InvalidSignatureException', `Signed header ${name} is missing.`);
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
  const signer = new SignatureV4({
    credentials: { accessKeyId: MOCK_AWS_CREDENTIALS.accessKeyId, secretAccessKey: MOCK_AWS_CREDENTIALS.secretAccessKey, ...(typeof token === 'string' ? { sessionToken: token } : {}) },
    region: MOCK_BEDROCK_REGION,
    service: 'bedrock',
    sha256: Sha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  // A signed x-amz-content-sha256 stands for the body in the signature: it must be the body's.
  const declared = headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== createHash('sha256').update(rawBody).digest('hex')) {
    throw new BedrockError(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
  }
  const host = headers.host ?? '';
  const expected = await signer.sign(
    { method: req.method ?? 'POST', protocol: 'http:', hostname: host.split(':')[0] ?? '', path, query: Object.fromEntries(new URLSearchParams(query)), headers, body: rawBody },
    { signingDate: date },
  );
  if (!String(expected.headers.authorization).endsWith(`Signature=${signature}`)) {
    throw new BedrockError(403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.');
  }
  if (typeof token === 'string' && token !== MOCK_AWS_CREDENTIALS.sessionToken) throw new BedrockError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
}

const BLOCK_KEYS = new Set(['text', 'image', 'document', 'toolUse', 'toolResult', 'reasoningContent', 'cachePoint', 'video', 'guardContent']);
const TOP_LEVEL = new Set(['messages', 'system', 'inferenceConfig', 'toolConfig', 'additionalModelRequestFields', 'additionalModelResponseFieldPaths', 'guardrailConfig', 'promptVariables', 'requestMetadata', 'performanceConfig']);

function validate(body: unknown, modelId: string): Json {
  if (!isObject(body)) throw validation('Malformed input request, please reformat your input and try again.');
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) throw validation(`Malformed input request: extraneous key [${key}] is not permitted.`);
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw validation('A conversation must start with a user message.');
  let expected = 'user';
  const toolUses = new Set<string>();
  let usesTools = false;
  for (const [index, message] of (messages as unknown[]).entries()) {
    if (!isObject(message) || message.role !== expected) throw validation(`A conversation must alternate between user and assistant roles (messages.${index}).`);
    expected = expected === 'user' ? 'assistant' : 'user';
    if (!Array.isArray(message.content) || message.content.length === 0) throw validation(`messages.${index}.content must not be empty.`);
    for (const block of message.content as unknown[]) {
      if (!isObject(block) || Object.keys(block).length !== 1 || !BLOCK_KEYS.has(Object.keys(block)[0] as string)) throw validation(`messages.${index}.content holds an unknown block.`);
      if ('text' in block && (typeof block.text !== 'string' || block.text.trim() === '')) throw validation('The text field in the ContentBlock object is blank.');
      if (isObject(block.toolUse)) {
        usesTools = true;
        if (message.role !== 'assistant' || typeof block.toolUse.toolUseId !== 'string' || !isObject(block.toolUse.input)) throw validation('A toolUse block must be an assistant block with toolUseId and an object input.');
        toolUses.add(block.toolUse.toolUseId);
      }
      if (isObject(block.toolResult)) {
        usesTools = true;
        if (message.role !== 'user' || !toolUses.has(String(block.toolResult.toolUseId))) throw validation('The toolResult blocks must answer toolUse ids of the previous turn.');
        if (!Array.isArray(block.toolResult.content)) throw validation('toolResult.content must be a list.');
      }
      if (isObject(block.image) && (!['png', 'jpeg', 'gif', 'webp'].includes(String(block.image.format)) || !isObject(block.image.source) || typeof block.image.source.bytes !== 'string')) {
        throw validation('Invalid image block.');
      }
    }
  }
  if ((messages.at(-1) as Json).role !== 'user') throw validation('A conversation must end with a user message.');
  if (body.system !== undefined && (!Array.isArray(body.system) || !body.system.every((block: unknown) => isObject(block) && (typeof block.text === 'string' || isObject(block.cachePoint))))) {
    throw validation('system must be a list of text blocks.');
  }
  if (body.inferenceConfig !== undefined) {
    if (!isObject(body.inferenceConfig)) throw validation('inferenceConfig must be an object.');
    for (const [key, value] of Object.entries(body.inferenceConfig)) {
      if (!['maxTokens', 'temperature', 'topP', 'stopSequences'].includes(key)) throw validation(`Malformed input request: extraneous key [${key}] is not permitted.`);
      if (key === 'temperature' && (typeof value !== 'number' || value < 0 || value > 1)) throw validation('temperature must be between 0 and 1.');
      if (key === 'maxTokens' && (typeof value !== 'number' || !Number.isInteger(value) || value < 1)) throw validation('maxTokens must be a positive integer.');
      if (key === 'maxTokens' && (value as number) > 131_072) throw validation('The maximum tokens you requested exceeds the model limit of 131072.');
    }
  }
  if (body.toolConfig !== undefined) {
    const config = body.toolConfig;
    if (!isObject(config) || !Array.isArray(config.tools) || config.tools.length === 0) throw validation('toolConfig.tools must not be empty.');
    for (const tool of config.tools as unknown[]) {
      if (!isObject(tool) || !isObject(tool.toolSpec) || typeof tool.toolSpec.name !== 'string' || !isObject(tool.toolSpec.inputSchema) || !isObject(tool.toolSpec.inputSchema.json)) {
        throw validation('Each tool needs toolSpec.name and toolSpec.inputSchema.json.');
      }
    }
  } else if (usesTools) throw validation('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  if (body.additionalModelRequestFields !== undefined && !/anthropic/.test(modelId)) throw validation(`The model ${modelId} does not take these additional model request fields.`);
  return body;
}

interface Answer {
  content: Json[];
  stopReason: string;
  inputTokens: number;
  outputTokens: number;
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

function lastUserText(message: Json): string {
  return (message.content as Json[]).flatMap((block) => (typeof block.text === 'string' ? [block.text] : [])).join(' ');
}

function answer(body: Json): Answer {
  const messages = body.messages as Json[];
  const last = messages.at(-1) as Json;
  const inputTokens = tokens(JSON.stringify(messages) + JSON.stringify(body.system ?? ''));
  const content: Json[] = [];
  const additional = isObject(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {};
  if (isObject(additional.thinking)) content.push({ reasoningContent: { reasoningText: { text: `Thinking about: ${lastUserText(last)}`.slice(0, 120), signature: 'mock-bedrock-signature' } } });
  const results = (last.content as Json[]).flatMap((block) => (isObject(block.toolResult) ? [block.toolResult] : []));
  const config = isObject(body.toolConfig) ? body.toolConfig : null;
  const choice = isObject(config?.toolChoice) ? config.toolChoice : {};
  const forced = isObject(choice.any) || isObject(choice.tool);
  if (config !== null && results.length === 0 && (forced || /weather/i.test(lastUserText(last)))) {
    const tools = (config.tools as Json[]).map((tool) => tool.toolSpec as Json);
    const tool = (isObject(choice.tool) ? tools.find((candidate) => candidate.name === (choice.tool as Json).name) : undefined) ?? tools.find((candidate) => /weather/.test(String(candidate.name))) ?? (tools[0] as Json);
    const schema = ((tool.inputSchema as Json).json ?? {}) as Json;
    const input: Json = {};
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) input[name] = 'Paris';
    content.push({ toolUse: { toolUseId: `tooluse_${createHash('sha256').update(JSON.stringify(messages)).digest('hex').slice(0, 22)}`, name: tool.name, input } });
    return { content, stopReason: 'tool_use', inputTokens, outputTokens: tokens(JSON.stringify(input)) + 5 };
  }
  let text = results.length > 0
    ? `Tool result received: ${results.flatMap((result) => (result.content as Json[]).flatMap((item) => (typeof item.text === 'string' ? [item.text] : isObject(item.json) ? [JSON.stringify(item.json)] : []))).join(' ')}`
    : `Echo: ${lastUserText(last)}`.slice(0, 200);
  let stopReason = 'end_turn';
  const maxTokens = isObject(body.inferenceConfig) && typeof body.inferenceConfig.maxTokens === 'number' ? body.inferenceConfig.maxTokens : null;
  if (maxTokens !== null && tokens(text) > maxTokens) {
    text = text.slice(0, maxTokens * 4);
    stopReason = 'max_tokens';
  }
  content.push({ text });
  return { content, stopReason, inputTokens, outputTokens: tokens(text) };
}

/** Reranking models the mock's region offers, by foundation-model ARN. */
export const MOCK_BEDROCK_RERANK_MODELS = ['amazon.rerank-v1:0', 'cohere.rerank-v3-5:0'];

function onlyFields(value: Json, fields: readonly string[], where: string): void {
  for (const field of Object.keys(value)) if (!fields.includes(field)) throw validation(`${where}: unknown field '${field}'`);
}

/**
 * The Agents runtime's Rerank (`POST /rerank`), checked as AWS documents it: exactly one TEXT query, 1 to 1000 INLINE
 * TEXT sources, a BEDROCK_RERANKING_MODEL configuration naming a reranking model by ARN, `numberOfResults` 1 to 1000.
 * Scores are the rerank mocks' (the share of the query's words a document contains); results most relevant first.
 */
function rerankAnswer(body: unknown): Json {
  if (!isObject(body)) throw validation('The request body must be an object.');
  onlyFields(body, ['queries', 'sources', 'rerankingConfiguration', 'nextToken'], 'RerankRequest');
  const { queries, sources, rerankingConfiguration: configuration } = body;
  if (!Array.isArray(queries) || queries.length !== 1) throw validation('queries must hold exactly one query.');
  const query = queries[0] as unknown;
  if (!isObject(query) || query.type !== 'TEXT' || !isObject(query.textQuery) || typeof query.textQuery.text !== 'string' || query.textQuery.text === '') throw validation('A query must be {type: TEXT, textQuery: {text}}.');
  onlyFields(query, ['type', 'textQuery'], 'RerankQuery');
  const queryText = query.textQuery.text;
  if (!Array.isArray(sources) || sources.length < 1 || sources.length > 1000) throw validation('sources must hold 1 to 1000 sources.');
  const texts = sources.map((source: unknown) => {
    if (!isObject(source) || source.type !== 'INLINE' || !isObject(source.inlineDocumentSource)) throw validation('A source must be {type: INLINE, inlineDocumentSource}.');
    onlyFields(source, ['type', 'inlineDocumentSource'], 'RerankSource');
    const document = source.inlineDocumentSource;
    if (document.type !== 'TEXT' || !isObject(document.textDocument) || typeof document.textDocument.text !== 'string') throw validation('An inline document must be {type: TEXT, textDocument: {text}}.');
    onlyFields(document, ['type', 'textDocument'], 'RerankDocument');
    return document.textDocument.text;
  });
  if (!isObject(configuration) || configuration.type !== 'BEDROCK_RERANKING_MODEL' || !isObject(configuration.bedrockRerankingConfiguration)) throw validation('rerankingConfiguration must be of type BEDROCK_RERANKING_MODEL.');
  const bedrock = configuration.bedrockRerankingConfiguration;
  onlyFields(bedrock, ['modelConfiguration', 'numberOfResults'], 'BedrockRerankingConfiguration');
  const arn = isObject(bedrock.modelConfiguration) ? bedrock.modelConfiguration.modelArn : undefined;
  const model = typeof arn === 'string' ? /^arn:aws:bedrock:([a-z0-9-]+)::foundation-model\/(.+)$/.exec(arn) : null;
  if (model === null) throw validation('modelConfiguration.modelArn must be a foundation-model ARN.');
  if (model[1] !== MOCK_BEDROCK_REGION || !MOCK_BEDROCK_RERANK_MODELS.includes(model[2] as string)) throw new BedrockError(404, 'ResourceNotFoundException', 'The reranking model was not found in this region.');
  const count = bedrock.numberOfResults;
  if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000)) throw validation('numberOfResults must be an integer from 1 to 1000.');
  const results = texts.map((text, index) => ({ index, relevanceScore: mockScore(queryText, text) }))
    .sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
  return { results: results.slice(0, typeof count === 'number' ? count : results.length) };
}

function sendError(res: ServerResponse, error: BedrockError): void {
  res.writeHead(error.status, { 'content-type': 'application/json', 'x-amzn-errortype': `${error.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'mock-request-id' });
  res.end(JSON.stringify({ message: error.message }));
}

/** Words of a text as stream deltas (each with its following space). */
function pieces(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [text];
}

async function stream(kit: MockServerKit<MockBedrockFault>, res: ServerResponse, result: Answer, fault: MockBedrockFault | null): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'mock-request-id' });
  const write = (frame: Buffer): void => {
    res.write(frame);
  };
  write(bedrockEvent('messageStart', { role: 'assistant' }));
  if (fault?.kind === 'corrupt-stream') {
    const frame = bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'broken' } });
    frame.writeUInt8(frame.readUInt8(frame.length - 6) ^ 0xff, frame.length - 6);
    res.end(frame);
    return;
  }
  for (const [index, block] of result.content.entries()) {
    if (isObject(block.toolUse)) {
      const use = block.toolUse;
      write(bedrockEvent('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } }));
      const input = JSON.stringify(use.input);
      const middle = Math.floor(input.length / 2);
      for (const part of [input.slice(0, middle), input.slice(middle)]) write(bedrockEvent('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: part } } }));
    } else if (isObject(block.reasoningContent)) {
      const reasoning = block.reasoningContent.reasoningText as Json;
      for (const part of pieces(String(reasoning.text))) write(bedrockEvent('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: part } } }));
      write(bedrockEvent('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: reasoning.signature } } }));
    } else {
      const text = String(block.text);
      for (const [position, part] of pieces(text).entries()) {
        write(bedrockEvent('contentBlockDelta', { contentBlockIndex: index, delta: { text: part } }));
        if (fault?.kind === 'stream-exception' && position === 0) {
          res.end(bedrockException('throttlingException', 'Too many requests, please wait before trying again.'));
          return;
        }
        await kit.sleep(1);
      }
    }
    write(bedrockEvent('contentBlockStop', { contentBlockIndex: index }));
  }
  write(bedrockEvent('messageStop', { stopReason: result.stopReason }));
  res.end(bedrockEvent('metadata', { usage: { inputTokens: result.inputTokens, outputTokens: result.outputTokens, totalTokens: result.inputTokens + result.outputTokens }, metrics: { latencyMs: 12 } }));
}

export async function startMockBedrockUpstream(options: { record?: boolean } = {}): Promise<MockBedrockUpstream> {
  const kit = new MockServerKit<MockBedrockFault>(options.record ?? true);
  const { port } = await kit.listen({
    maxBodyBytes: 20 * 1024 * 1024,
    tooLarge: (_req, res) => sendError(res, validation('Input is too long for the requested model.')),
    failed: (_req, res, error) => {
      if (res.headersSent) return void res.destroy();
      sendError(res, error instanceof BedrockError ? error : new BedrockError(500, 'InternalServerException', 'Internal server error'));
    },
    async handle(req, res, rawBody) {
      const call = kit.intake(req, rawBody);
      const fault = kit.takeFault();
      if (!(await kit.beforeAnswer(req, res, fault, 0))) return;
      if (call.method === 'POST' && call.path === '/rerank') {
        await verifySignature(req, rawBody);
        if (call.jsonError) throw validation('Malformed input request, please reformat your input and try again.');
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'mock-request-id' });
        res.end(JSON.stringify(rerankAnswer(call.body)));
        return;
      }
      const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(call.path);
      if (call.method !== 'POST' || match === null) throw new BedrockError(404, 'UnknownOperationException', 'Unknown operation');
      await verifySignature(req, rawBody);
      const modelId = decodeURIComponent(match[1] as string);
      if (!/^((us|eu|apac|global)\.)?(anthropic|meta|mistral|amazon|cohere|ai21|deepseek)\./.test(modelId)) {
        throw new BedrockError(404, 'ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.');
      }
      if (fault?.kind === 'throttle') throw new BedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
      if (call.jsonError) throw validation('Malformed input request, please reformat your input and try again.');
      const result = answer(validate(call.body, modelId));
      if (match[2] === 'converse-stream') return stream(kit, res, result, fault);
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'mock-request-id' });
      res.end(JSON.stringify({
        output: { message: { role: 'assistant', content: result.content } },
        stopReason: result.stopReason,
        usage: { inputTokens: result.inputTokens, outputTokens: result.outputTokens, totalTokens: result.inputTokens + result.outputTokens },
        metrics: { latencyMs: 12 },
      }));
    },
  });
  return {
    url: `http://127.0.0.1:${port}`,
    requests: kit.requests,
    setFault: (fault) => kit.setFault(fault),
    close: () => kit.close(),
  };
}
