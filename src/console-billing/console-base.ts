import type { RequestContext } from '../http/request-context.js';

/** The console's address for links and Stripe's return pages: CONSOLE_URL, else the Host the browser used. */
export function consoleBase(configured: string | null, context: RequestContext): string {
  if (configured !== null) return configured;
  const host = context.request.headers.host ?? '127.0.0.1';
  return `http://${host}`;
}
