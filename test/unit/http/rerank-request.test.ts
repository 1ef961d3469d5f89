import { describe, expect, it } from 'vitest';
import { parseRerankRequest } from '../../../src/operations/rerank-request.js';
import type { RerankRequest } from '../../../src/ir/rerank.js';
import { parseRerankAnswer } from '../../../src/upstreams/rerank-answer.js';

describe('parseRerankRequest', () => {
  it('takes strings and { text } objects, clamps top_n to the documents, defaults return_documents to false', () => {
    expect(parseRerankRequest({ model: 'm', query: 'q', documents: ['a', { text: 'b', title: 'ignored' }], top_n: 9, max_tokens_per_doc: 100 })).toEqual({
      model: 'm', query: 'q', documents: ['a', 'b'], topN: 2, returnDocuments: false, maxTokensPerDoc: 100,
    });
  });

  it.each([
    [{ query: 'q', documents: ['a'] }, 'model'],
    [{ model: 'm', query: 'q', documents: [null] }, 'documents[0]'],
    [{ model: 'm', query: 'q', documents: ['a'], top_n: -1 }, 'top_n'],
    [{ model: 'm', query: 'q', documents: ['a'], max_tokens_per_doc: 40_000 }, 'max_tokens_per_doc'],
  ])('names the wrong field %#', (body, param) => {
    expect(() => parseRerankRequest(body)).toThrow(expect.objectContaining({ param }) as Error);
  });
});

describe('parseRerankAnswer', () => {
  const request: RerankRequest = { model: 'm', query: 'q', documents: ['a', 'b', 'c'], topN: 2, returnDocuments: false };
  const answer = (results: unknown): Buffer => Buffer.from(JSON.stringify({ results }));

  it('sorts most relevant first and cuts to top_n whatever order the upstream used', () => {
    const { results } = parseRerankAnswer(answer([{ index: 0, relevance_score: 0.1 }, { index: 2, relevance_score: 0.9 }, { index: 1, relevance_score: 0.5 }]), request, 'results');
    expect(results).toEqual([{ index: 2, relevanceScore: 0.9 }, { index: 1, relevanceScore: 0.5 }]);
  });

  it.each([
    [[{ index: 3, relevance_score: 0.1 }]],
    [[{ index: 0, relevance_score: 0.1 }, { index: 0, relevance_score: 0.2 }]],
    [[{ index: 0, relevance_score: 'high' }]],
    ['nope'],
  ])('refuses an answer that does not fit the request %#', (results) => {
    expect(() => parseRerankAnswer(answer(results), request, 'results')).toThrow(/upstream provider answered/);
  });
});
