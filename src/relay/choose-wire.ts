import type { ClientCodec } from '../codecs/client-codec.js';
import type { Channel } from '../domain/records.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { passThroughOperationOf, wireCarries, type ClientWire, type UpstreamOperation } from '../wire/wire.js';

/** What the caller asked for, in the caller's wire: the operation a channel either takes as it came or translated. */
export type RequestedOperation =
  | { kind: 'chat'; codec: Pick<ClientCodec, 'wire' | 'streamPassesThrough'>; stream: boolean }
  | { kind: 'embeddings'; wire: ClientWire; batch: boolean }
  | { kind: 'count-tokens'; wire: ClientWire };

/**
 * How one channel gets the request: the caller's body with the operation the adapter is sent it with
 * (`pass-through`), or the canonical request in the channel's own wire format (`translate`).
 */
export type WireChoice = { kind: 'pass-through'; operation: UpstreamOperation } | { kind: 'translate' };

const TRANSLATE: WireChoice = { kind: 'translate' };

/**
 * The one decision between pass-through and translation, for every endpoint, asked of the wires: a channel whose
 * adapter takes bodies as they came on the wire the caller's wire is served on, for an operation that wire has and
 * the channel serves, gets the caller's body, unless the caller's stream framing has to be rebuilt from canonical
 * parts; every other channel gets the translated request.
 */
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): WireChoice {
  const passThrough = adapter.passThrough;
  const wire = requested.kind === 'chat' ? requested.codec.wire : requested.wire;
  if (passThrough === undefined || wire.servedOn.name !== adapter.wire.name) return TRANSLATE;
  const operation = passThroughOperationOf(wire, requested);
  if (operation === null || !wireCarries(adapter.wire, operation)) return TRANSLATE;
  if (passThrough.serves !== undefined && !passThrough.serves(channel, operation)) return TRANSLATE;
  if (requested.kind === 'chat' && requested.stream && !requested.codec.streamPassesThrough()) return TRANSLATE;
  return { kind: 'pass-through', operation };
}
