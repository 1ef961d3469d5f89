/**
 * What a family must answer outside its own folder, checked for every family in the list, so adding one fails here
 * (rather than quietly mislabelling) until it is answered: its chat and embeddings routes' usage-log labels are named
 * in the GenAI operation names (telemetry/gen-ai-names.ts; telemetry may not import the families).
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_FAMILIES } from '../../../src/codecs/families.js';
import { operationNameOf } from '../../../src/telemetry/gen-ai-names.js';

const routes = CLIENT_FAMILIES.flatMap((family) => family.routes.map((route) => [`${family.name} ${route.method} ${String(route.path)}`, route] as const));

describe('the client families', () => {
  it.each(routes)('%s: its label has a GenAI operation name', (_name, route) => {
    if (route.operation === 'chat') expect(['chat', 'generate_content']).toContain(operationNameOf(route.chat.protocol));
    if (route.operation === 'embeddings') expect(operationNameOf(route.embeddings.label)).toBe('embeddings');
  });
});
