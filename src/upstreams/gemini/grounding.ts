import { randomBytes } from 'node:crypto';
import type { Citation, WebSearchPart } from '../../ir/message.js';
import { isJsonObject, type JsonObject } from '../../wire/gemini/gemini-wire.js';

/** A cited span of the answer text, in UTF-8 bytes from its start (how Gemini's grounding segments count). */
interface Support {
  startByte: number;
  endByte: number;
  sources: Array<{ url: string; title?: string }>;
}

export interface Grounding {
  /** One search per query Gemini ran; the sources it grounded on go with the first. */
  searches: WebSearchPart[];
  supports: Support[];
}

/** A candidate's `groundingMetadata` (Google Search grounding) → searches and cited spans; null when absent. */
export function groundingOf(candidate: JsonObject | null): Grounding | null {
  const metadata = candidate?.groundingMetadata;
  if (!isJsonObject(metadata)) return null;
  const chunks = Array.isArray(metadata.groundingChunks) ? metadata.groundingChunks : [];
  const sources = chunks.map((chunk: unknown) => {
    const web = isJsonObject(chunk) && isJsonObject(chunk.web) ? chunk.web : {};
    const url = typeof web.uri === 'string' ? web.uri : '';
    return typeof web.title === 'string' ? { url, title: web.title } : { url };
  });
  const queries = Array.isArray(metadata.webSearchQueries) ? metadata.webSearchQueries.filter((query): query is string => typeof query === 'string') : [];
  const searches: WebSearchPart[] = (queries.length > 0 ? queries : [undefined]).map((query, index) => {
    const search: WebSearchPart = { type: 'web-search', id: `gs_${randomBytes(12).toString('hex')}`, sources: index === 0 ? sources.filter((source) => source.url !== '') : [] };
    if (query !== undefined) search.query = query;
    return search;
  });
  const supports: Support[] = [];
  for (const support of Array.isArray(metadata.groundingSupports) ? metadata.groundingSupports : []) {
    if (!isJsonObject(support) || !isJsonObject(support.segment)) continue;
    const indices = Array.isArray(support.groundingChunkIndices) ? support.groundingChunkIndices : [];
    const cited = indices.flatMap((index: unknown) => (typeof index === 'number' && sources[index] !== undefined && sources[index].url !== '' ? [sources[index]] : []));
    if (cited.length === 0) continue;
    const startByte = typeof support.segment.startIndex === 'number' ? support.segment.startIndex : 0;
    const endByte = typeof support.segment.endIndex === 'number' ? support.segment.endIndex : startByte;
    supports.push({ startByte, endByte, sources: cited });
  }
  return searches.length === 0 && supports.length === 0 ? null : { searches, supports };
}

/**
 * Citations of the answer's text blocks (given in order, as whole texts): each grounded span cites its sources in
 * the block it starts in, with offsets in UTF-16 code units within that block.
 */
export function citationsByBlock(texts: readonly string[], supports: readonly Support[]): Citation[][] {
  const out: Citation[][] = texts.map(() => []);
  const buffers = texts.map((text) => Buffer.from(text, 'utf8'));
  for (const support of supports) {
    let offset = 0;
    for (let index = 0; index < buffers.length; index++) {
      const buffer = buffers[index] as Buffer;
      if (support.startByte < offset + buffer.length || index === buffers.length - 1) {
        const start = Math.max(0, Math.min(buffer.length, support.startByte - offset));
        const end = Math.max(start, Math.min(buffer.length, support.endByte - offset));
        const startIndex = buffer.subarray(0, start).toString('utf8').length;
        const endIndex = buffer.subarray(0, end).toString('utf8').length;
        for (const source of support.sources) {
          const citation: Citation = { url: source.url, startIndex, endIndex };
          if (source.title !== undefined) citation.title = source.title;
          (out[index] as Citation[]).push(citation);
        }
        break;
      }
      offset += buffer.length;
    }
  }
  return out;
}
