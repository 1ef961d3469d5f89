/** Only same-site paths are followed after sign-in (never `//evil.example`, `/\\evil.example` or a full URL). */
export function safeNextPath(next: string | null): string {
  return next !== null && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/keys';
}
