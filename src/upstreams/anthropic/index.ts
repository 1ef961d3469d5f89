import { defineUpstream } from '../upstream-descriptor.js';
import { AnthropicAdapter } from './anthropic-adapter.js';
import { anthropicWire } from '../../wire/anthropic/wire.js';

export const anthropicUpstream = defineUpstream({
  channelTypes: ['anthropic'],
  wire: anthropicWire,
  capabilities: { streaming: true, countTokens: 'upstream', embeddings: false, media: [], passThrough: ['chat', 'count-tokens'] },
  catalog: { anthropic: { provider: 'anthropic' } },
  form: {
    anthropic: {
      credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://api.anthropic.com.',
      settings: [
        { name: 'default_max_tokens', label: 'Default max tokens', input: 'number', hint: 'Output cap when the caller sets none.' },
        { name: 'structured_outputs', label: 'Strict tool schemas (structured outputs)', input: 'boolean' },
      ],
    },
  },
  createAdapter: ({ http }) => new AnthropicAdapter(http),
});
