import { geminiFamily } from '../../codecs/gemini/family.js';
import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';

/** Runs a Gemini batch route as Google's clients expect on any path: their key forms, Google's error objects. */
export function asGemini(route: (services: GatewayServices) => RouteHandler): (services: GatewayServices) => RouteHandler {
  return (services) => {
    const handler = route(services);
    return (context) => {
      context.family = geminiFamily;
      return handler(context);
    };
  };
}

/**
 * A path both OpenAI's and Google's SDKs call (`GET /v1/batches`, `GET /v1/batches/{id}`: @google/genai calls its
 * batches under `/v1/` by default): Google's clients, known by their key (`x-goog-api-key` or `?key=`, no Bearer
 * token or `x-api-key`), get the Gemini route; every other caller OpenAI's.
 */
export function forGoogleClients(gemini: (services: GatewayServices) => RouteHandler, other: (services: GatewayServices) => RouteHandler): (services: GatewayServices) => RouteHandler {
  return (services) => {
    const google = asGemini(gemini)(services);
    const rest = other(services);
    return (context) => (geminiFamily.models.recognises?.(context.request.headers, context.query) === true ? google(context) : rest(context));
  };
}
