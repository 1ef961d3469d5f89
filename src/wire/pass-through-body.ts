import { withFields } from '../shared/with-fields.js';
import { GATEWAY_STATE_MARKER } from './gateway-state.js';
import type { ClientWire } from './wire.js';

/** The caller's body with `model` set to the upstream model, as JSON text. */
export function bodyNamingModel(body: Record<string, unknown>, upstreamModel: string): string {
  return JSON.stringify(withFields(body, { model: upstreamModel }));
}

/**
 * The body with `model` set, as JSON text, without the reasoning state this gateway made for another provider. Only a
 * text holding the gateway's marker (a scan of the bytes about to be sent) is read for such state; the rare body that
 * holds some is written again without it.
 */
export function bodyWithoutGatewayState(body: Record<string, unknown>, upstreamModel: string, strip: (body: Record<string, unknown>) => Record<string, unknown>): string {
  const text = bodyNamingModel(body, upstreamModel);
  if (!text.includes(GATEWAY_STATE_MARKER)) return text;
  const stripped = strip(body);
  return stripped === body ? text : bodyNamingModel(stripped, upstreamModel);
}

/**
 * A same-wire upstream's complete JSON answer naming `model` (the public id of the model that answered) in the wire's
 * own field for it, in place of the upstream's own name. An answer that is not a JSON object goes back as it came.
 */
export function answerNamingModel(wire: ClientWire, body: Buffer, model: string): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return body;
  return Buffer.from(JSON.stringify({ ...parsed, [wire.answerModelField]: model }), 'utf8');
}
