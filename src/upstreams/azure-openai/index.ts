import { OPENAI_MEDIA_KINDS } from '../openai/openai-media.js';
import { defineUpstream } from '../upstream-descriptor.js';
import { AzureOpenAIAdapter } from './azure-openai-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';

export const azureOpenAIUpstream = defineUpstream({
  channelTypes: ['azure-openai'],
  wire: openAIWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, media: OPENAI_MEDIA_KINDS, passThrough: ['chat', 'embeddings', 'responses'] },
  catalog: { 'azure-openai': { provider: 'openai' } },
  form: {
    'azure-openai': {
      credential: 'key', baseUrl: 'required', baseUrlHint: 'The resource URL, https://<resource>.openai.azure.com.',
      upstreamModelHint: 'the deployment name',
      settings: [
        { name: 'api_version', label: 'API version', input: 'text', placeholder: '2024-10-21', hint: "'v1' uses the /openai/v1 API." },
        { name: 'responses_api', label: 'Serves the Responses API itself', input: 'boolean' },
      ],
    },
  },
  createAdapter: ({ http }) => new AzureOpenAIAdapter(http),
});
