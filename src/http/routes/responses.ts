import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { authenticate } from '../authenticate.js';
import type { RouteHandler } from '../request-context.js';

/**
 * GET/DELETE /v1/responses/{id}, POST /v1/responses/{id}/cancel, GET /v1/responses/{id}/input_items: the gateway keeps
 * no response bodies (metadata-only usage logs) and does not know which upstream account holds a stored response, so
 * these answer a clear 404 after authentication rather than guessing a channel.
 */
export function storedResponseRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await authenticate(context, services);
    throw new GatewayError(
      'not_found',
      `Response '${context.params.id ?? ''}' cannot be retrieved, cancelled or deleted through this gateway: it stores no response bodies. Keep the output on the client (send 'store': false and pass the conversation in 'input').`,
    );
  };
}
