import type { IncomingMessage } from 'node:http';

/** Cookie values of the request by name (the first of duplicates wins; undecodable values are skipped). */
export function readCookies(request: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = request.headers.cookie;
  if (header === undefined) return cookies;
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const name = part.slice(0, equals).trim();
    if (name === '' || cookies.has(name)) continue;
    try {
      cookies.set(name, decodeURIComponent(part.slice(equals + 1).trim()));
    } catch {
      // A malformed value is as good as none.
    }
  }
  return cookies;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. Omitted: a browser-session cookie. */
  maxAgeSeconds?: number;
  secure: boolean;
  /**
   * `Strict` (the default) unless the cookie must come back on a top-level navigation from another site, as the
   * single sign-on binding cookie does when the identity provider sends the browser back.
   */
  sameSite?: 'Strict' | 'Lax';
}

/** A `Set-Cookie` value: always Path=/ and HttpOnly, SameSite=Strict unless told Lax; Secure when the console is on TLS. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', `SameSite=${options.sameSite ?? 'Strict'}`];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
