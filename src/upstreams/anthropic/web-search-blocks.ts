import type { Citation, WebSearchPart } from '../../ir/message.js';
import { isJsonObject } from '../../wire/json-object.js';

/** One `web_search_result_location` citation of a text block (other citation kinds are not web sources). */
export function citationOf(raw: unknown): Citation | null {
  if (!isJsonObject(raw) || raw.type !== 'web_search_result_location' || typeof raw.url !== 'string') return null;
  const citation: Citation = { url: raw.url };
  if (typeof raw.title === 'string' && raw.title !== '') citation.title = raw.title;
  if (typeof raw.cited_text === 'string' && raw.cited_text !== '') citation.citedText = raw.cited_text;
  return citation;
}

export function citationsOf(raw: unknown): Citation[] {
  if (!Array.isArray(raw)) return [];
  return raw.map(citationOf).filter((citation): citation is Citation => citation !== null);
}

/** The query of a `server_tool_use` block of the web search tool, or null for another server tool. */
export function webSearchQuery(block: Record<string, unknown>): string | null {
  if (block.name !== 'web_search') return null;
  return isJsonObject(block.input) && typeof block.input.query === 'string' ? block.input.query : '';
}

/**
 * A `web_search_tool_result` block → the canonical search: its sources (none when the search failed, Anthropic
 * then gives a `web_search_tool_result_error`) and the query of the server_tool_use it answers.
 */
export function webSearchResult(block: Record<string, unknown>, queries: ReadonlyMap<string, string>): WebSearchPart {
  const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
  const sources = Array.isArray(block.content)
    ? block.content.flatMap((result: unknown) => {
      if (!isJsonObject(result) || result.type !== 'web_search_result' || typeof result.url !== 'string') return [];
      return [typeof result.title === 'string' ? { url: result.url, title: result.title } : { url: result.url }];
    })
    : [];
  const part: WebSearchPart = { type: 'web-search', id, sources };
  const query = queries.get(id);
  if (query !== undefined && query !== '') part.query = query;
  return part;
}
