import { validateOpenAIChatRequest } from '../../codecs/openai-chat/validate-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { admit } from '../../relay/admission.js';
import { passThroughChat } from '../../relay/pass-through-chat.js';
import { RequestMeter } from '../../relay/request-meter.js';
import type { GatewayServices } from '../../services.js';
import { estimateMessagesTokens } from '../../shared/estimate-tokens.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';

const MAX_ATTEMPTS = 3;

/** POST /v1/chat/completions (spec 2.1, 2.2, 4.1). */
export function chatCompletionsRoute(services: GatewayServices): RouteHandler {
  return async (context: RequestContext) => {
    const { key, account } = await authenticate(context, services, 'openai');
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, 'openai-chat', '/v1/chat/completions', context.startedAt);
    try {
      const body = await readJsonObject(context, services.config.maxBodyBytes);
      const envelope = validateOpenAIChatRequest(body);
      meter.modelId = envelope.model;
      meter.stream = envelope.stream;
      const model = services.catalog.model(envelope.model);
      if (model === undefined) {
        throw new GatewayError('model_not_found', `The model '${envelope.model}' does not exist. GET /v1/models lists the available models.`, { param: 'model' });
      }
      meter.model = model;
      meter.promptTokensEstimate = estimateMessagesTokens(body.messages);
      const routes = services.catalog.routes(model.id);
      if (routes.length === 0) {
        throw new GatewayError('upstream_unavailable', `No upstream channel currently serves model '${model.id}'.`);
      }
      const rateLimitHeaders = await admit(services, {
        key,
        account,
        model,
        estimatedTokens: meter.promptTokensEstimate + (envelope.maxOutputTokens ?? 0),
        meter,
      });
      await passThroughChat(
        { adapters: services.adapters, credentials: services.credentials, logger: services.logger, maxAttempts: MAX_ATTEMPTS },
        { context, meter, routes, body, stream: envelope.stream, clientWantsUsage: envelope.includeUsage, responseHeaders: rateLimitHeaders },
      );
    } catch (error) {
      const status = error instanceof GatewayError ? error.status : 500;
      meter.finish({ status, errorCode: error instanceof GatewayError ? error.code : 'internal_error' });
      throw error;
    }
  };
}
