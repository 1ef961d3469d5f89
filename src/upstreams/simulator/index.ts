import { defineUpstream } from '../upstream-descriptor.js';
import { SimulatorAdapter } from './simulator-adapter.js';

export const simulatorUpstream = defineUpstream({
  channelTypes: ['simulator'],
  protocol: 'openai-chat',
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, media: [], passThrough: ['chat', 'embeddings'] },
  createAdapter: ({ clock }) => new SimulatorAdapter(clock),
});
