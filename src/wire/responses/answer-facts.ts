import type { AnswerFacts } from '../../ir/answer-facts.js';
import { stringOrNull } from '../answer-facts.js';
import { isJsonObject } from '../json-object.js';

/**
 * A Responses API response object: `model`, and how it ended — the incomplete reason (`max_output_tokens`,
 * `content_filter`) when it stopped early, else its status (`completed`, `failed`).
 */
export function responsesAnswerFacts(json: unknown): AnswerFacts {
  if (!isJsonObject(json)) return { model: null, finishReasons: [] };
  const reason = isJsonObject(json.incomplete_details) ? stringOrNull(json.incomplete_details.reason) : null;
  const ended = reason ?? stringOrNull(json.status);
  return { model: stringOrNull(json.model), finishReasons: ended === null ? [] : [ended] };
}
