import type { Channel } from '../../domain/records.js';

/**
 * Whether a channel of the OpenAI wire serves `POST /responses` itself, so Responses requests go through untouched
 * (and `previous_response_id`, `store`, built-in tools work, the state living at the upstream). Default: OpenAI's
 * own API and Azure's v1 API do; OpenAI-compatible providers mostly do not and are reached through chat completions.
 * `settings.responses_api` (true/false) overrides the default per channel.
 */
export function servesResponsesApi(channel: Channel, byDefault: boolean): boolean {
  const setting = channel.settings.responses_api;
  return typeof setting === 'boolean' ? setting : byDefault;
}
