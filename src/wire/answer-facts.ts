import { NO_ANSWER_FACTS, type AnswerFacts } from '../ir/answer-facts.js';

/** A JSON answer body read by one wire's `facts` reader; a body that is not JSON tells nothing. */
export function answerFactsOfJson(body: Buffer, facts: (json: unknown) => AnswerFacts): AnswerFacts {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return NO_ANSWER_FACTS;
  }
  return facts(parsed);
}

export const stringOrNull = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The string values of `key` in each object of `list`, in order (absent and null values skipped). */
export function stringsOf(list: unknown, key: string): string[] {
  const found: string[] = [];
  if (!Array.isArray(list)) return found;
  for (const entry of list) {
    const value: unknown = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[key] : undefined;
    if (typeof value === 'string' && value !== '') found.push(value);
  }
  return found;
}
