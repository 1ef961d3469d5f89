/**
 * A browser stand-in for the console's JSON API over real HTTP: a cookie jar, the CSRF token the API hands out,
 * and (behind TRUST_PROXY=all) an X-Forwarded-For address of its own so per-IP limits see separate visitors.
 */
import { randomBytes } from 'node:crypto';
import { TOTP } from 'otpauth';
import type { SmtpCapture, CapturedMail } from './smtp-capture.js';

export interface ConsoleAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
  /** The raw Set-Cookie lines of this answer. */
  setCookies: string[];
}

export interface ConsoleRequestOptions {
  /** `false`: send no X-CSRF-Token; a string: send that one instead of the remembered token. */
  csrf?: false | string;
  headers?: Record<string, string>;
}

export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;
  readonly ip: string;

  constructor(readonly baseUrl: string, options: { ip?: string; userAgent?: string } = {}) {
    this.ip = options.ip ?? randomIp();
    this.userAgent = options.userAgent ?? 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0';
  }

  readonly userAgent: string;

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request<T = Record<string, unknown>>(method: string, path: string, body?: unknown, options: ConsoleRequestOptions = {}): Promise<ConsoleAnswer<T>> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip, 'user-agent': this.userAgent, ...options.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD') {
      if (options.csrf === undefined && this.csrfToken === null) await this.refreshCsrf();
      const token = options.csrf === undefined ? this.csrfToken : options.csrf;
      if (token !== false && token !== null) headers['x-csrf-token'] = token;
      if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    }
    const response = await fetch(this.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(15_000) });
    const setCookies = response.headers.getSetCookie();
    this.absorbCookies(setCookies);
    const text = await response.text();
    let parsed: unknown = {};
    if (text !== '' && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    const token = (parsed as { csrf_token?: unknown }).csrf_token;
    if (typeof token === 'string') this.csrfToken = token;
    return { status: response.status, body: parsed as T, text, headers: response.headers, setCookies };
  }

  /** Raw fetch with this client's cookies, IP and CSRF token (for streams and downloads). */
  async raw(method: string, path: string, body?: unknown): Promise<Response> {
    if (this.csrfToken === null && method !== 'GET') await this.refreshCsrf();
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip, 'user-agent': this.userAgent, cookie: this.cookieHeader() };
    if (method !== 'GET' && this.csrfToken !== null) headers['x-csrf-token'] = this.csrfToken;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(this.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(15_000) });
  }

  absorbCookies(lines: string[]): void {
    for (const line of lines) {
      const [pair] = line.split(';');
      const equals = (pair ?? '').indexOf('=');
      if (pair === undefined || equals < 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async refreshCsrf(): Promise<string> {
    const answer = await this.request<{ csrf_token: string }>('GET', '/api/session');
    if (answer.status !== 200) throw new Error(`GET /api/session answered ${answer.status}: ${answer.text}`);
    return answer.body.csrf_token;
  }

  signUp(email: string, password: string): Promise<ConsoleAnswer> {
    return this.request('POST', '/api/auth/sign-up', { email, password });
  }

  signIn(email: string, password: string): Promise<ConsoleAnswer> {
    return this.request('POST', '/api/auth/sign-in', { email, password });
  }
}

/** A random address in 10.0.0.0/8, so each client is its own visitor for per-IP limits. */
export function randomIp(): string {
  const bytes = randomBytes(3);
  return `10.${bytes[0]}.${bytes[1]}.${bytes[2]}`;
}

export function uniqueEmail(prefix = 'person'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`;
}

/** A password the policy accepts. */
export function strongPassword(): string {
  return `Tide-${randomBytes(6).toString('hex')}-Lantern`;
}

/** Waits (bounded) for a mail to `to` whose subject matches, and returns it. */
export async function waitForMail(capture: SmtpCapture, to: string, subject: RegExp, count = 1, timeoutMs = 5000): Promise<CapturedMail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const matching = capture.to(to).filter((mail) => subject.test(mail.subject));
    if (matching.length >= count) return matching[count - 1] as CapturedMail;
    if (Date.now() > deadline) throw new Error(`no mail "${subject.source}" #${count} to ${to} within ${timeoutMs} ms (got: ${capture.to(to).map((mail) => mail.subject).join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The token of the one-time link in a mail (`…?token=…`). */
export function linkToken(mail: CapturedMail): string {
  const match = /[?&]token=([A-Za-z0-9_%-]+)/.exec(mail.text);
  if (match?.[1] === undefined) throw new Error(`no link with a token in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}

/** The 6-digit TOTP code of a secret at a time (default now). */
export function totpCode(secret: string, at: number = Date.now()): string {
  return new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });
}
