import { defineUpstream } from '../upstream-descriptor.js';
import { BedrockAdapter } from './bedrock-adapter.js';
import { bedrockConverseWire } from '../../wire/bedrock/wire.js';

export const bedrockUpstream = defineUpstream({
  channelTypes: ['bedrock'],
  wire: bedrockConverseWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: false, rerank: true, media: [], passThrough: [] },
  catalog: { bedrock: { provider: 'aws' } },
  form: {
    bedrock: {
      credential: 'json',
      credentialHint: '{"access_key_id": "AKIA…", "secret_access_key": "…", "session_token": "…"}, ACCESS_KEY_ID:SECRET_ACCESS_KEY, or a Bedrock API key.',
      baseUrl: 'optional', baseUrlHint: 'Default https://bedrock-runtime.<region>.amazonaws.com (a VPC endpoint or proxy overrides it).',
      upstreamModelHint: 'a Bedrock model id, inference-profile id or ARN',
      settings: [
        { name: 'region', label: 'Region', input: 'text', required: true, placeholder: 'us-east-1' },
        { name: 'inference_profile', label: 'Inference profile', input: 'text', placeholder: 'none', hint: "'auto' (the region's geography), 'none', or a prefix such as us, eu, apac, global." },
        { name: 'guardrail_identifier', label: 'Guardrail id', input: 'text' },
        { name: 'guardrail_version', label: 'Guardrail version', input: 'text', placeholder: 'DRAFT' },
        { name: 'default_max_tokens', label: 'Default max tokens', input: 'number', hint: 'Output cap used while Claude thinks.' },
        { name: 'rerank_base_url', label: 'Rerank endpoint', input: 'text', placeholder: 'https://bedrock-agent-runtime.<region>.amazonaws.com', hint: 'Where reranks go (Bedrock\'s Rerank API); default the base URL when set, else the region\'s Agents runtime.' },
      ],
    },
  },
  createAdapter: ({ http }) => new BedrockAdapter(http),
});
