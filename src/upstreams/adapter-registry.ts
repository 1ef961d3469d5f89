import type { Clock } from '../shared/clock.js';
import type { ChannelType } from '../storage/records.js';
import type { UpstreamAdapter, UpstreamTransport } from './upstream-adapter.js';
import { UPSTREAMS } from './upstreams.js';

/** Channel type → adapter, one adapter per registered upstream. */
export class AdapterRegistry {
  readonly #byType = new Map<ChannelType, UpstreamAdapter>();

  constructor(http: UpstreamTransport, clock: Clock) {
    for (const upstream of UPSTREAMS) {
      const adapter = upstream.createAdapter({ http, clock });
      for (const type of upstream.channelTypes) this.#byType.set(type, adapter);
    }
  }

  get(type: ChannelType): UpstreamAdapter | undefined {
    return this.#byType.get(type);
  }

  supports(type: ChannelType): boolean {
    return this.#byType.has(type);
  }
}
