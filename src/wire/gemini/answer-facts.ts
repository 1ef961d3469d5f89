import type { AnswerFacts } from '../../ir/answer-facts.js';
import { stringOrNull, stringsOf } from '../answer-facts.js';
import { isJsonObject } from '../json-object.js';

/**
 * A generateContent answer or stream chunk — or a streamed JSON array of them, read from its last element that
 * says how it finished: `modelVersion` and each candidate's `finishReason`.
 */
export function geminiAnswerFacts(json: unknown): AnswerFacts {
  if (Array.isArray(json)) {
    for (let index = json.length - 1; index >= 0; index -= 1) {
      const facts = geminiAnswerFacts(json[index]);
      if (facts.finishReasons.length > 0 || index === 0) return facts;
    }
    return { model: null, finishReasons: [] };
  }
  if (!isJsonObject(json)) return { model: null, finishReasons: [] };
  return { model: stringOrNull(json.modelVersion), finishReasons: stringsOf(json.candidates, 'finishReason') };
}
