import { defineUpstream } from '../upstream-descriptor.js';
import { SimulatorAdapter } from './simulator-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';

export const simulatorUpstream = defineUpstream({
  channelTypes: ['simulator'],
  wire: openAIWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, media: [], passThrough: ['chat', 'embeddings'] },
  form: {
    simulator: {
      credential: 'optional-key', baseUrl: 'optional',
      settings: [
        { name: 'latency_ms', label: 'Latency (ms)', input: 'number' },
        { name: 'chunk_delay_ms', label: 'Delay between chunks (ms)', input: 'number' },
        { name: 'output_tokens', label: 'Output tokens', input: 'number' },
      ],
    },
  },
  createAdapter: ({ clock }) => new SimulatorAdapter(clock),
});
