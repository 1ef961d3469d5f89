import { ApiError } from './api-error';
import type { Session } from './types';

export { ApiError, errorMessage } from './api-error';

interface ErrorBody {
  error?: { message?: unknown; code?: unknown; type?: unknown; param?: unknown };
}

async function toApiError(response: Response): Promise<ApiError> {
  let body: ErrorBody = {};
  try {
    body = (await response.json()) as ErrorBody;
  } catch {
    // Not JSON (a proxy's error page): the status alone speaks.
  }
  const message = typeof body.error?.message === 'string' ? body.error.message : `The console answered ${response.status}.`;
  const code = typeof body.error?.code === 'string' ? body.error.code : typeof body.error?.type === 'string' ? body.error.type : 'http_error';
  const retryAfter = Number(response.headers.get('retry-after'));
  const param = typeof body.error?.param === 'string' ? body.error.param : null;
  return new ApiError(response.status, code, message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null, param);
}

/**
 * The one way the app talks to the console API: same origin, JSON, the session cookie, and the CSRF token on
 * every state-changing request. The token comes from `GET /api/session` and from sign-in and sign-up answers;
 * a `csrf_failed` answer fetches a fresh one and tries once more.
 */
export class ApiClient {
  #csrfToken: string | null = null;

  rememberCsrfToken(token: string | undefined | null): void {
    if (typeof token === 'string' && token !== '') this.#csrfToken = token;
  }

  async session(): Promise<Session> {
    const session = await this.get<Session>('/api/session');
    this.rememberCsrfToken(session.csrf_token);
    return session;
  }

  get<T>(path: string, query?: Record<string, string | undefined>): Promise<T> {
    return this.request<T>('GET', withQuery(path, query));
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }

  /** A raw streaming POST (the playground): the caller reads the body; errors are thrown like any other. */
  async stream(path: string, body: unknown, signal: AbortSignal): Promise<Response> {
    const response = await this.send('POST', path, body, signal);
    if (!response.ok) throw await toApiError(response);
    return response;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    if (response.status === 204 || response.status === 202) return undefined as T;
    if (!response.ok) throw await toApiError(response);
    const result = (await response.json()) as T;
    this.rememberCsrfToken((result as { csrf_token?: string } | null)?.csrf_token);
    return result;
  }

  async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const attempt = async (): Promise<Response> => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (method !== 'GET' && method !== 'HEAD' && this.#csrfToken !== null) headers['x-csrf-token'] = this.#csrfToken;
      return fetch(path, {
        method,
        headers,
        credentials: 'same-origin',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    };
    if (method !== 'GET' && method !== 'HEAD' && this.#csrfToken === null) await this.session();
    const response = await attempt();
    if (response.status !== 403 || method === 'GET') return response;
    const copy = response.clone();
    const error = await toApiError(copy);
    if (error.code !== 'csrf_failed') return response;
    await this.session();
    return attempt();
  }
}

function withQuery(path: string, query?: Record<string, string | undefined>): string {
  if (query === undefined) return path;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

