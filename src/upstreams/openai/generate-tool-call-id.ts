import { randomUUID } from 'node:crypto';

/** A tool call id in OpenAI's style, for providers that send calls without one. */
export function generateToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}
