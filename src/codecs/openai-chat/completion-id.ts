import { randomUUID } from 'node:crypto';

/** OpenAI completion ids start with `chatcmpl-`; an upstream's own id is kept behind that prefix. */
export function openAICompletionId(id: string): string {
  if (id.startsWith('chatcmpl-')) return id;
  return `chatcmpl-${id === '' ? randomUUID().replaceAll('-', '') : id}`;
}
