/** A user name or password in an http(s) URL: `https://user:pw@host/…` (what follows the scheme, up to the `@`). */
const CREDENTIALS_IN_URL = /\b(https?:\/\/)[^/\s"'?#@]*@/gi;

/** Whether the URL carries a user name or password (`https://user:pw@host`). */
export function hasUrlCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/** The text with the user name and password of every http(s) URL in it removed (`https://host/…` stays). */
export function withoutUrlCredentials(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, '$1');
}
