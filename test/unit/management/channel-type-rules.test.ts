/**
 * The admin API's channel checks follow each type's form in the upstream registry (the one the console shows): a key
 * is required unless the form's credential is optional, a JSON credential is one key never split, and a base URL and
 * settings are required where the form requires them. A new upstream's form is enforced without an edit here.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { checkChannel, takesStructuredKeys } from '../../../src/management/channel-type-rules.js';
import { CHANNEL_TYPES, channelFormOf } from '../../../src/upstreams/upstreams.js';

function refusal(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return error.param ?? error.message;
  }
}

describe('channel checks from the registry forms', () => {
  it.each(CHANNEL_TYPES.map((type) => [type]))('%s', (type) => {
    const form = channelFormOf(type);
    expect(takesStructuredKeys(type)).toBe(form.credential === 'json');
    expect(refusal(() => checkChannel(type, 'https://upstream.example/v1', [], {})) === 'api_key').toBe(form.credential !== 'optional-key');
    // Settings checks of a few types (a region, a project) may refuse first; only the base URL is asked about here.
    const withoutBase = refusal(() => checkChannel(type, null, ['key'], {}));
    expect(withoutBase === 'base_url').toBe(form.baseUrl === 'required');
    for (const field of form.settings.filter((setting) => setting.required === true)) {
      expect(refusal(() => checkChannel(type, 'https://upstream.example/v1', ['key'], {})), field.name).toBe(`settings.${field.name}`);
    }
  });

  it('keeps the rules of the types that were special cases by name', () => {
    for (const type of ['bedrock', 'vertex-ai']) expect(channelFormOf(type).credential, type).toBe('json');
    for (const type of ['simulator', 'ollama', 'vllm', 'lmstudio']) expect(channelFormOf(type).credential, type).toBe('optional-key');
    for (const type of ['openai-compatible', 'azure-openai']) expect(channelFormOf(type).baseUrl, type).toBe('required');
  });
});
