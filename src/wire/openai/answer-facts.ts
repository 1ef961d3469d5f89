import type { AnswerFacts } from '../../ir/answer-facts.js';
import { stringOrNull, stringsOf } from '../answer-facts.js';
import { isJsonObject } from '../json-object.js';

/** A chat completion or one of its stream chunks: `model` and each choice's `finish_reason`. */
export function openAIChatAnswerFacts(json: unknown): AnswerFacts {
  if (!isJsonObject(json)) return { model: null, finishReasons: [] };
  return { model: stringOrNull(json.model), finishReasons: stringsOf(json.choices, 'finish_reason') };
}
