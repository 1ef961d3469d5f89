import { GatewayError } from '../../errors/gateway-error.js';

/** What Anthropic's model list shows of one gateway model. */
export interface AnthropicModelDescription {
  id: string;
  displayName: string;
  /** Unix milliseconds. */
  createdAt: number;
}

export const DEFAULT_ANTHROPIC_PAGE_SIZE = 20;
const MAX_ANTHROPIC_PAGE_SIZE = 1000;

/** One `ModelInfo` as `GET /v1/models/{model_id}` answers it. */
export function anthropicModelObject(model: AnthropicModelDescription): Record<string, unknown> {
  return { type: 'model', id: model.id, display_name: model.displayName, created_at: new Date(model.createdAt).toISOString() };
}

function limitOf(raw: string | null): number {
  if (raw === null || raw === '') return DEFAULT_ANTHROPIC_PAGE_SIZE;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ANTHROPIC_PAGE_SIZE) {
    throw new GatewayError('bad_request', `limit: Input should be between 1 and ${MAX_ANTHROPIC_PAGE_SIZE}.`, { param: 'limit' });
  }
  return limit;
}

/**
 * `GET /v1/models?limit=&after_id=&before_id=` in Anthropic's shape: `{data, has_more, first_id, last_id}`, the
 * models in the order given (Anthropic lists the newest first), paged by the ids either side of the page.
 */
export function encodeAnthropicModelList(models: readonly AnthropicModelDescription[], query: { limit: string | null; afterId: string | null; beforeId: string | null }): string {
  const limit = limitOf(query.limit);
  let start = 0;
  let end = models.length;
  if (query.afterId !== null) start = models.findIndex((model) => model.id === query.afterId) + 1;
  if (query.beforeId !== null) {
    const before = models.findIndex((model) => model.id === query.beforeId);
    end = before < 0 ? models.length : before;
    if (query.afterId === null) start = Math.max(0, end - limit);
  }
  const page = models.slice(start, Math.min(end, start + limit));
  const hasMore = query.beforeId !== null && query.afterId === null ? start > 0 : start + page.length < end;
  return JSON.stringify({
    data: page.map(anthropicModelObject),
    has_more: hasMore,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
  });
}
