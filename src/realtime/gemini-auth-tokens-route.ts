import { invalidArgument } from '../codecs/gemini/invalid-argument.js';
import { GatewayError } from '../errors/gateway-error.js';
import { authenticate } from '../http/authenticate.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { sendJson } from '../http/respond.js';
import { keyMayUse, modelNotAllowed } from '../relay/admission.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { clientSecretKey, MAX_SESSION_CONFIG_BYTES, mintClientSecret } from './client-secret.js';

/** Google's defaults: a token lasts 30 minutes and opens sessions for its first minute, one session. */
const DEFAULT_LIFETIME_MS = 30 * 60_000;
const DEFAULT_NEW_SESSION_MS = 60_000;
/** Google's longest token lifetime. */
const MAX_LIFETIME_MS = 20 * 3_600_000;
/** The most sessions one token may open. */
const MAX_USES = 100;
const MAX_BODY_BYTES = 64 * 1024;
/** What prefixes a token's name: `auth_tokens/<token>`, the string a browser passes as its key. */
export const AUTH_TOKEN_NAME_PREFIX = 'auth_tokens/';

/** An RFC 3339 time of the body (clock milliseconds), or `fallback` when absent. */
function timeField(body: Record<string, unknown>, name: string, fallback: number): number {
  const value = body[name];
  if (value === undefined || value === null) return fallback;
  const at = typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at)) throw invalidArgument(name, `'${name}' must be an RFC 3339 time such as "2030-01-01T00:00:00Z".`);
  return at;
}

/**
 * POST /v1alpha/auth_tokens (and /v1beta/): Gemini's ephemeral tokens, as `@google/genai`'s `authTokens.create`
 * asks for them, so a browser opens Gemini Live sessions through the gateway without the real key. A token is a
 * gateway client secret (signed, checked on any instance sharing SECRET_KEY) named `auth_tokens/ek_…`: it is scoped
 * to the model of `bidiGenerateContentSetup.model` (required here: the key must be allowed to use it), opens at most
 * `uses` sessions (1 by default) until `newSessionExpireTime` (a minute by default), and its sessions end at
 * `expireTime` (30 minutes by default, at most 20 hours). The rest of `bidiGenerateContentSetup` is laid over each
 * session's own setup, so the browser cannot change what the token fixes. Answered as Google answers: `{name}`.
 */
export function geminiAuthTokensRoute(services: GatewayServices): RouteHandler {
  const key = clientSecretKey(services.config.secretKey, services.config.dataDirectory);
  return async (context) => {
    const { key: apiKey } = await authenticate(context, services);
    const body = await readJsonObject(context, MAX_BODY_BYTES);
    const now = services.clock.now();
    const expiresAt = timeField(body, 'expireTime', now + DEFAULT_LIFETIME_MS);
    if (expiresAt <= now) throw invalidArgument('expireTime', "'expireTime' must be in the future.");
    if (expiresAt - now > MAX_LIFETIME_MS) throw invalidArgument('expireTime', "'expireTime' must be at most 20 hours from now.");
    const newSessionsUntil = timeField(body, 'newSessionExpireTime', Math.min(expiresAt, now + DEFAULT_NEW_SESSION_MS));
    if (newSessionsUntil <= now || newSessionsUntil > expiresAt) throw invalidArgument('newSessionExpireTime', "'newSessionExpireTime' must be in the future and not after 'expireTime'.");
    const uses = body.uses ?? 1;
    if (typeof uses !== 'number' || !Number.isInteger(uses) || uses < 1 || uses > MAX_USES) throw invalidArgument('uses', `'uses' must be an integer from 1 to ${MAX_USES}.`);
    const setup = body.bidiGenerateContentSetup;
    if (typeof setup !== 'object' || setup === null || Array.isArray(setup)) {
      throw invalidArgument('bidiGenerateContentSetup', "'bidiGenerateContentSetup' is required with the token's model: {\"model\": \"models/<model>\"}.");
    }
    const { model: rawModel, ...fixed } = setup as Record<string, unknown>;
    const modelName = typeof rawModel === 'string' ? rawModel.replace(/^models\//, '') : '';
    if (modelName === '') throw invalidArgument('bidiGenerateContentSetup.model', "'bidiGenerateContentSetup.model' is required: the token opens sessions of that model only.");
    const model = services.catalog.model(modelName);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${modelName}' does not exist.`, { param: 'bidiGenerateContentSetup.model' });
    if (!keyMayUse(apiKey, model, modelName)) throw modelNotAllowed(model);
    if (Buffer.byteLength(JSON.stringify(fixed)) > MAX_SESSION_CONFIG_BYTES) {
      throw invalidArgument('bidiGenerateContentSetup', `The setup is over ${MAX_SESSION_CONFIG_BYTES} bytes as JSON; send the rest in the session's own setup.`);
    }
    const token = mintClientSecret(key, {
      keyId: apiKey.id,
      model: modelName,
      expiresAt,
      sessionId: newId('sess'),
      session: null,
      sessions: { uses, createdAt: now, newSessionsUntil },
      liveSetup: fixed,
    });
    sendJson(context, 200, { name: `${AUTH_TOKEN_NAME_PREFIX}${token}` }, { 'cache-control': 'no-store' });
  };
}
