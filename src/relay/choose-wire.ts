import type { ClientCodec } from '../codecs/client-codec.js';
import type { Channel } from '../domain/records.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { isClientWire, type UpstreamOperation, type WireProtocol } from '../wire/protocols.js';

/** What the caller asked for, in the caller's wire: the operation a channel either takes as it came or translated. */
export type RequestedOperation =
  | { kind: 'chat'; codec: Pick<ClientCodec, 'protocol' | 'passThroughOperation' | 'streamPassesThrough'>; stream: boolean; sse: boolean }
  | { kind: 'embeddings'; protocol: WireProtocol; batch: boolean }
  | { kind: 'count-tokens'; protocol: WireProtocol };

/**
 * How one channel gets the request: the caller's body with the operation the adapter is sent it with
 * (`pass-through`), or the canonical request in the channel's own wire format (`translate`).
 */
export type Wire = { kind: 'pass-through'; operation: UpstreamOperation } | { kind: 'translate' };

const TRANSLATE: Wire = { kind: 'translate' };

/**
 * A protocol no adapter speaks as its own wire but that some channels serve natively (OpenAI's Responses API):
 * the operation those channels are asked about (`servesPassThrough`). Undefined for an adapter's own protocol.
 */
function nativeOperation(requested: RequestedOperation): UpstreamOperation | undefined {
  switch (requested.kind) {
    case 'chat':
      return requested.codec.passThroughOperation?.(requested.stream);
    case 'embeddings':
      return undefined;
    case 'count-tokens':
      return requested.protocol === 'openai-responses' ? { kind: 'responses-input-tokens' } : undefined;
    default: {
      const unknown: never = requested;
      throw new Error(`unknown operation ${String(unknown)}`);
    }
  }
}

/** The operation a same-protocol channel is sent the caller's body with. */
function ownOperation(requested: RequestedOperation): UpstreamOperation {
  switch (requested.kind) {
    case 'chat':
      return { kind: 'chat', stream: requested.stream };
    case 'embeddings':
      return { kind: 'embeddings', batch: requested.batch };
    case 'count-tokens':
      return { kind: 'count-tokens' };
    default: {
      const unknown: never = requested;
      throw new Error(`unknown operation ${String(unknown)}`);
    }
  }
}

function protocolOf(requested: RequestedOperation): WireProtocol {
  return requested.kind === 'chat' ? requested.codec.protocol : requested.protocol;
}

/**
 * The one decision between pass-through and translation, for every endpoint: a channel whose adapter speaks the
 * caller's protocol (or serves it natively) gets the caller's body, unless the caller's stream framing has to be
 * rebuilt from canonical parts; every other channel gets the translated request.
 */
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): Wire {
  if (!isClientWire(adapter.protocol)) return TRANSLATE;
  const native = nativeOperation(requested);
  if (native !== undefined) return adapter.servesPassThrough?.(channel, native) === true ? { kind: 'pass-through', operation: native } : TRANSLATE;
  if (adapter.protocol !== protocolOf(requested)) return TRANSLATE;
  if (requested.kind === 'chat' && requested.stream && !requested.codec.streamPassesThrough(requested.sse)) return TRANSLATE;
  return { kind: 'pass-through', operation: ownOperation(requested) };
}
