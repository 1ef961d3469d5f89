/** The error object each protocol family answers in, checked without vitest so property tests can collect misses. */
export type Family = 'openai' | 'anthropic' | 'gemini';

/** Which family's error shape a path answers in (the gateway's own rule). */
export function familyOfPath(path: string): Family {
  if (path.startsWith('/v1/messages')) return 'anthropic';
  if (path.startsWith('/v1beta/') || (path.startsWith('/v1/models/') && path.includes(':'))) return 'gemini';
  return 'openai';
}

/**
 * Null when `text` is the family's error body with the spec's fields (message, type, code: strings; Gemini keeps
 * Google's status name and carries the gateway's code and type), else what is wrong.
 */
export function familyErrorProblem(family: Family, text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 120))}`;
  }
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (typeof error !== 'object' || error === null) return `no error object: ${text.slice(0, 200)}`;
  for (const field of ['message', 'type', 'code'] as const) {
    if (typeof error[field] !== 'string' || error[field] === '') return `error.${field} is not a string: ${text.slice(0, 200)}`;
  }
  if (family === 'anthropic' && (body as { type?: unknown }).type !== 'error') return `anthropic body without type "error": ${text.slice(0, 200)}`;
  if (family === 'gemini' && typeof error.status !== 'string') return `gemini error without status: ${text.slice(0, 200)}`;
  return null;
}
