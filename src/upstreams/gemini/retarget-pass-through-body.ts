import type { UpstreamOperation } from '../upstream-adapter.js';
import { isJsonObject, parseJson, readField } from '../../wire/gemini/gemini-wire.js';

/**
 * On the pass-through path the client's body goes out unchanged, except where Gemini repeats the model inside it
 * and insists it match the URL: `batchEmbedContents.requests[].model`, `countTokens.generateContentRequest.model`
 * and an optional `embedContent.model`.
 * Those are set to the upstream model; chat bodies (the hot path) are never parsed.
 */
export function retargetPassThroughBody(operation: UpstreamOperation, body: string | Buffer, modelResource: string): string | Buffer {
  if (operation.kind === 'chat') return body;
  const parsed = parseJson(body.toString());
  if (!isJsonObject(parsed)) return body;
  if (operation.kind === 'embeddings' && !operation.batch) {
    if (parsed.model === undefined) return body;
    retarget(parsed, modelResource);
    return JSON.stringify(parsed);
  }
  if (operation.kind === 'embeddings') {
    const requests = readField(parsed, 'requests');
    if (!Array.isArray(requests)) return body;
    for (const request of requests) if (isJsonObject(request)) retarget(request, modelResource);
    return JSON.stringify(parsed);
  }
  const nested = readField(parsed, 'generateContentRequest');
  if (!isJsonObject(nested)) return body;
  retarget(nested, modelResource);
  return JSON.stringify(parsed);
}

function retarget(object: Record<string, unknown>, modelResource: string): void {
  delete object.model;
  object.model = modelResource;
}
