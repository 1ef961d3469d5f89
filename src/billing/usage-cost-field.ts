/**
 * The request's cost inside a body's usage object, as `"cost": <decimal USD>` (the field OpenRouter-style gateways
 * use; the official SDKs keep or ignore unknown usage fields). Spliced into the bytes right after the opening brace of
 * the top-level usage object, so the upstream's body is otherwise passed on untouched and never re-serialised.
 * A quoted key cannot occur inside a JSON string (its quotes would be escaped), and the answer's usage is its last
 * such key (OpenAI, Anthropic and Gemini all write it after the content). Returns null when there is no usage
 * object to put it in. `usageKey` names the answer's usage field (`usage`; Gemini's `usageMetadata`).
 */
export function spliceUsageCost(body: Buffer | string, costDecimalUsd: string, usageKey = 'usage'): Buffer | null {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const quoted = `"${usageKey}"`;
  const key = bytes.lastIndexOf(quoted);
  if (key < 0) return null;
  let index = key + quoted.length;
  index = skipWhitespace(bytes, index);
  if (bytes[index] !== 0x3a) return null;
  index = skipWhitespace(bytes, index + 1);
  if (bytes[index] !== 0x7b) return null;
  const closing = skipWhitespace(bytes, index + 1);
  const separator = bytes[closing] === 0x7d ? '' : ',';
  return Buffer.concat([bytes.subarray(0, index + 1), Buffer.from(`"cost":${costDecimalUsd}${separator}`, 'utf8'), bytes.subarray(index + 1)]);
}

function skipWhitespace(bytes: Buffer, from: number): number {
  let index = from;
  while (index < bytes.length && (bytes[index] === 0x20 || bytes[index] === 0x0a || bytes[index] === 0x0d || bytes[index] === 0x09)) index += 1;
  return index;
}
