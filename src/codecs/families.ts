import { anthropicFamily } from './anthropic-messages/family.js';
import type { ClientFamily } from './client-family.js';
import { geminiFamily } from './gemini/family.js';
import { openAIFamily } from './openai-chat/family.js';

/**
 * Every client family, one line each. The order counts: the first that owns a path answers its errors, routes mount
 * family by family, and on OpenAI's model list the first family whose listing recognises the caller answers. OpenAI
 * comes last: it owns every other path, and its model lookup's path matches a Gemini action's.
 */
export const CLIENT_FAMILIES: readonly ClientFamily[] = [geminiFamily, anthropicFamily, openAIFamily];

export function familyOfPath(path: string): ClientFamily {
  for (const family of CLIENT_FAMILIES) if (family.ownsPath(path)) return family;
  return openAIFamily;
}

export type { ClientFamily } from './client-family.js';
export { anthropicFamily, geminiFamily, openAIFamily };
