import type { NativeOnlyField } from '../codecs/family-route.js';
import { GatewayError } from '../errors/gateway-error.js';
import { chooseWire, type RequestedOperation } from './choose-wire.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';

/**
 * The routes whose channel serves the caller's wire natively (pass-through) for a request with a field only such a
 * channel can honour; with none left the request is refused up front, naming the field.
 */
export function nativeRoutes(adapters: AdapterRegistry, routes: readonly ChannelRoute[], requested: RequestedOperation, field: NativeOnlyField): readonly ChannelRoute[] {
  const native = routes.filter((route) => {
    const adapter = adapters.get(route.channel.type);
    return adapter !== undefined && chooseWire(adapter, route.channel, requested).kind === 'pass-through';
  });
  if (native.length === 0) throw new GatewayError('unsupported_parameter', field.message, { param: field.param });
  return native;
}
