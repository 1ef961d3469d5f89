import type { AnswerFacts } from '../../ir/answer-facts.js';
import { stringOrNull } from '../answer-facts.js';
import { isJsonObject } from '../json-object.js';

/** A Messages answer (or a stream's `message_start` message): `model` and `stop_reason`. */
export function anthropicAnswerFacts(json: unknown): AnswerFacts {
  if (!isJsonObject(json)) return { model: null, finishReasons: [] };
  const stopReason = stringOrNull(json.stop_reason);
  return { model: stringOrNull(json.model), finishReasons: stopReason === null ? [] : [stopReason] };
}
