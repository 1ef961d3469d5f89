/** An answer of the console API that was not 2xx, carrying the error object's code, message and field (`param`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds: number | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A message a person can act on, for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    // Most refusals already say when to retry; the hint is added only to those that do not.
    const saysWhen = /\b(retry|try again)\b/i.test(error.message);
    if (error.status === 429 && error.retryAfterSeconds !== null && !saysWhen) return `${error.message} Try again in ${error.retryAfterSeconds} s.`;
    return error.message;
  }
  if (error instanceof Error && error.name === 'AbortError') return 'Stopped.';
  return 'The console could not be reached. Check your connection and try again.';
}
