/**
 * The `data:` payload of one server-sent event (its data lines joined), or null when it has none (a comment or
 * keep-alive). A buffer that is not SSE-framed at all (an element of the streamed JSON array) is returned whole.
 */
export function eventPayload(event: Buffer): string | null {
  const text = event.toString('utf8');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return text.trim();
  let data: string | null = null;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}
