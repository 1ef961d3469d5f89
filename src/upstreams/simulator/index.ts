import { defineUpstream } from '../upstream-descriptor.js';
import { SimulatorAdapter } from './simulator-adapter.js';

export const simulatorUpstream = defineUpstream({
  channelTypes: ['simulator'],
  protocol: 'openai-chat',
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
