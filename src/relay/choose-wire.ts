import type { ClientCodec, PassThroughCodec } from '../codecs/client-codec.js';
import type { Channel } from '../domain/records.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { passThroughOperationOf, wireCarries, type ClientWire, type UpstreamOperation } from '../wire/wire.js';

/** What the caller asked for, in the caller's wire: the operation a channel either takes as it came or translated. */
export type RequestedOperation = RequestedChat | { kind: 'embeddings'; wire: ClientWire; batch: boolean } | { kind: 'count-tokens'; wire: ClientWire };

/** A chat request in the caller's codec: passed through only where the codec has a pass-through part. */
export interface RequestedChat {
  kind: 'chat';
  codec: Pick<ClientCodec, 'wire' | 'passThrough'>;
  stream: boolean;
}

/**
 * How one channel gets the request: the caller's body with the operation the adapter is sent it with
 * (`pass-through`), or the canonical request in the channel's own wire format (`translate`).
 */
export type WireChoice = { kind: 'pass-through'; operation: UpstreamOperation } | { kind: 'translate' };

/** The choice for a chat request: passed through with the codec's pass-through part (the only way to reach that path). */
export type ChatWireChoice = { kind: 'pass-through'; operation: UpstreamOperation; codec: PassThroughCodec } | { kind: 'translate' };

const TRANSLATE: WireChoice = { kind: 'translate' };

/**
 * The one decision between pass-through and translation, for every endpoint, asked of the wires: a channel whose
 * adapter takes bodies as they came on the wire the caller's wire is served on, for an operation that wire has and
 * the channel serves, gets the caller's body, unless the caller's stream framing has to be rebuilt from canonical
 * parts; every other channel gets the translated request.
 */
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedChat): ChatWireChoice;
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): WireChoice;
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): WireChoice | ChatWireChoice {
  const passThrough = adapter.passThrough;
  // A chat codec without a pass-through part is always translated.
  const forwarding = requested.kind === 'chat' ? requested.codec.passThrough : null;
  if (passThrough === undefined || forwarding === undefined) return TRANSLATE;
  const wire = requested.kind === 'chat' ? requested.codec.wire : requested.wire;
  if (wire.servedOn.name !== adapter.wire.name) return TRANSLATE;
  const operation = passThroughOperationOf(wire, requested);
  if (operation === null || !wireCarries(adapter.wire, operation)) return TRANSLATE;
  if (passThrough.serves !== undefined && !passThrough.serves(channel, operation)) return TRANSLATE;
  if (forwarding === null) return { kind: 'pass-through', operation };
  if (requested.kind === 'chat' && requested.stream && !forwarding.streamPassesThrough()) return TRANSLATE;
  return { kind: 'pass-through', operation, codec: forwarding };
}
