import { withoutGatewayThinking } from '../codecs/anthropic-messages/without-gateway-state.js';
import { GATEWAY_STATE_MARKER } from '../codecs/carried-signature.js';
import { withoutGatewayReasoning } from '../codecs/openai-responses/without-gateway-state.js';
import { withFields } from '../shared/with-fields.js';
import type { WireProtocol } from '../upstreams/upstream-adapter.js';

/**
 * The caller's body for a same-protocol upstream: unchanged except for the model name, for OpenAI streams
 * the usage chunk request (dropped again on the way back when the caller did not ask for it), and for Anthropic
 * and Responses bodies the reasoning state this gateway made for another provider (thinking blocks and reasoning
 * items marked as the gateway's), which the provider would refuse. Gemini carries the model in the URL, so its body
 * goes as it came.
 */
export function passThroughBody(protocol: WireProtocol, body: Record<string, unknown>, upstreamModel: string, stream: boolean): string {
  switch (protocol) {
    case 'openai-chat': {
      if (!stream) return JSON.stringify({ ...body, model: upstreamModel });
      const streamOptions = typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
      return JSON.stringify(withFields(body, { model: upstreamModel, stream_options: withFields(streamOptions, { include_usage: true }) }));
    }
    case 'openai-responses':
      return withoutGatewayState(body, upstreamModel, withoutGatewayReasoning);
    case 'anthropic-messages':
      return withoutGatewayState(body, upstreamModel, withoutGatewayThinking);
    case 'gemini':
      return JSON.stringify(body);
    default: {
      const unknown: never = protocol;
      throw new Error(`unknown protocol ${String(unknown)}`);
    }
  }
}

/**
 * The body with `model` set, as JSON text. Only a text holding the gateway's marker (a scan of the bytes about to be
 * sent) is read for gateway-made state; the rare body that holds some is written again without it.
 */
function withoutGatewayState(body: Record<string, unknown>, upstreamModel: string, strip: (body: Record<string, unknown>) => Record<string, unknown>): string {
  const text = JSON.stringify(withFields(body, { model: upstreamModel }));
  if (!text.includes(GATEWAY_STATE_MARKER)) return text;
  const stripped = strip(body);
  return stripped === body ? text : JSON.stringify(withFields(stripped, { model: upstreamModel }));
}

/**
 * A same-protocol upstream's complete JSON answer naming `model` (the public id of the model that answered) in
 * place of the upstream's own name: `model` of OpenAI and Anthropic answers, `modelVersion` of Gemini's. An answer
 * that is not a JSON object goes back as it came.
 */
export function answerNamingModel(protocol: WireProtocol, body: Buffer, model: string): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body;
  const field = protocol === 'gemini' ? 'modelVersion' : 'model';
  return Buffer.from(JSON.stringify({ ...parsed, [field]: model }), 'utf8');
}
