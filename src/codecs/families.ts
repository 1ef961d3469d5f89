import { anthropicFamily } from './anthropic-messages/family.js';
import type { ClientFamily } from './client-family.js';
import { geminiFamily } from './gemini/family.js';
import { openAIFamily } from './openai-chat/family.js';

/** Every client family, one line each; the first that owns a path answers its errors. OpenAI owns the rest. */
export const CLIENT_FAMILIES: readonly ClientFamily[] = [anthropicFamily, geminiFamily, openAIFamily];

export function familyOfPath(path: string): ClientFamily {
  for (const family of CLIENT_FAMILIES) if (family.ownsPath(path)) return family;
  return openAIFamily;
}

export type { ClientFamily } from './client-family.js';
export { anthropicFamily, geminiFamily, openAIFamily };
