import { invalidArgument } from './invalid-argument.js';

/** What the Gemini model list shows of one gateway model. */
export interface GeminiModelDescription {
  /** Public model id, without `models/`. */
  id: string;
  kind: 'chat' | 'embedding' | 'image' | 'audio' | 'moderation' | 'rerank';
  displayName?: string;
  description?: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
}

export const DEFAULT_MODEL_PAGE_SIZE = 50;
export const MAX_MODEL_PAGE_SIZE = 1000;

const METHODS: Record<GeminiModelDescription['kind'], string[]> = {
  chat: ['generateContent', 'streamGenerateContent', 'countTokens'],
  embedding: ['embedContent', 'batchEmbedContents', 'countTokens'],
  image: [],
  audio: [],
  moderation: [],
  rerank: [],
};

/** One `Model` resource as `GET /v1beta/models/{model}` answers it. */
export function geminiModelObject(model: GeminiModelDescription): Record<string, unknown> {
  const object: Record<string, unknown> = {
    name: `models/${model.id}`,
    baseModelId: model.id,
    version: '001',
    displayName: model.displayName ?? model.id,
    description: model.description ?? '',
    supportedGenerationMethods: METHODS[model.kind],
  };
  if (model.inputTokenLimit !== undefined) object.inputTokenLimit = model.inputTokenLimit;
  if (model.outputTokenLimit !== undefined) object.outputTokenLimit = model.outputTokenLimit;
  return object;
}

export function encodeGeminiModel(model: GeminiModelDescription): string {
  return JSON.stringify(geminiModelObject(model));
}

/**
 * `GET /v1beta/models?pageSize=&pageToken=` → `{models, nextPageToken?}`. The page token is opaque to the caller
 * (the offset, base64url-encoded); `nextPageToken` is left out on the last page, as Google does.
 */
export function encodeGeminiModelList(models: readonly GeminiModelDescription[], page: { pageSize?: number | string | null; pageToken?: string | null } = {}): string {
  const size = pageSizeOf(page.pageSize);
  const offset = offsetOf(page.pageToken);
  const slice = models.slice(offset, offset + size);
  const body: Record<string, unknown> = { models: slice.map(geminiModelObject) };
  if (offset + size < models.length) body.nextPageToken = Buffer.from(String(offset + size)).toString('base64url');
  return JSON.stringify(body);
}

function pageSizeOf(value: number | string | null | undefined): number {
  if (value === undefined || value === null || value === '') return DEFAULT_MODEL_PAGE_SIZE;
  const size = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(size) || size < 0) throw invalidArgument('pageSize', "'pageSize' must be a non-negative integer.");
  return size === 0 ? DEFAULT_MODEL_PAGE_SIZE : Math.min(size, MAX_MODEL_PAGE_SIZE);
}

function offsetOf(token: string | null | undefined): number {
  if (token === undefined || token === null || token === '') return 0;
  const decoded = Buffer.from(token, 'base64url').toString('utf8');
  const offset = /^\d{1,15}$/.test(decoded) ? Number(decoded) : Number.NaN;
  if (!Number.isSafeInteger(offset)) throw invalidArgument('pageToken', "'pageToken' is not a token this server issued.");
  return offset;
}
