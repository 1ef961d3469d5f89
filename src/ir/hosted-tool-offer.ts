import type { ChatRequest } from './chat-request.js';

/**
 * The hosted tools a request offers the model, each with the most calls the request allows (null: it sets no cap;
 * absent: not offered). Money is held for them before the request is forwarded.
 */
export interface HostedToolOffer {
  webSearch?: number | null;
  webFetch?: number | null;
  fileSearch?: number | null;
}

/** The web search a canonical request offers (with its `maxUses`), whatever family it came from. */
export function hostedToolOfferOfChat(request: ChatRequest): HostedToolOffer {
  const search = request.hostedTools?.find((tool) => tool.kind === 'web-search');
  return search === undefined ? {} : { webSearch: search.maxUses ?? null };
}
