import { defineUpstream } from '../upstream-descriptor.js';
import { BedrockAdapter } from './bedrock-adapter.js';

export const bedrockUpstream = defineUpstream({
  channelTypes: ['bedrock'],
  protocol: 'bedrock-converse',
  capabilities: { streaming: true, countTokens: 'local', embeddings: false, media: [], passThrough: [] },
  catalog: { bedrock: { provider: 'aws' } },
  createAdapter: ({ http }) => new BedrockAdapter(http),
});
