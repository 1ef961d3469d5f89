import { badRequest } from '../codecs/openai-chat/bad-request.js';
import { GatewayError } from '../errors/gateway-error.js';
import { authenticate } from '../http/authenticate.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { sendJson } from '../http/respond.js';
import { keyMayUse, modelNotAllowed } from '../relay/admission.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { clientSecretKey, MAX_SESSION_CONFIG_BYTES, mintClientSecret } from './client-secret.js';

/** OpenAI's bounds of `expires_after.seconds`. */
const MIN_SECONDS = 10;
const MAX_SECONDS = 7200;
/** The largest request body: a session configuration with room to spare. */
const MAX_BODY_BYTES = 64 * 1024;

function objectField(body: Record<string, unknown>, name: string): Record<string, unknown> | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(name, `'${name}' must be an object.`);
  return value as Record<string, unknown>;
}

/** How long the secret lasts: `expires_after: {anchor: "created_at", seconds}`, else REALTIME_CLIENT_SECRET_SECONDS. */
function lifetimeMs(body: Record<string, unknown>, fallbackMs: number): number {
  const expiresAfter = objectField(body, 'expires_after');
  if (expiresAfter === null) return fallbackMs;
  if (expiresAfter.anchor !== undefined && expiresAfter.anchor !== 'created_at') throw badRequest('expires_after.anchor', "'expires_after.anchor' must be 'created_at'.");
  const seconds = expiresAfter.seconds;
  if (seconds === undefined) return fallbackMs;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw badRequest('expires_after.seconds', `'expires_after.seconds' must be an integer from ${MIN_SECONDS} to ${MAX_SECONDS}.`);
  }
  return seconds * 1000;
}

/**
 * POST /v1/realtime/client_secrets: an ephemeral secret a browser opens one model's realtime sessions with, so it never
 * holds the real key. The secret is scoped to the model of `session.model` (which the key must be allowed to use)
 * and carries the session configuration, sent upstream as the session opens; it opens one session, and lasts `expires_after.seconds`
 * (REALTIME_CLIENT_SECRET_SECONDS by default) and is refused once its key is revoked, disabled or expired. Answered as
 * OpenAI answers: `{value, expires_at, session}`.
 */
export function clientSecretsRoute(services: GatewayServices): RouteHandler {
  const key = clientSecretKey(services.config.secretKey, services.config.dataDirectory);
  return async (context) => {
    const { key: apiKey } = await authenticate(context, services);
    const body = await readJsonObject(context, MAX_BODY_BYTES);
    const session = objectField(body, 'session');
    if (session === null) throw badRequest('session', "'session' is required: {type: 'realtime', model: '<model>'}.");
    if (session.type !== undefined && session.type !== 'realtime') throw badRequest('session.type', "Only realtime sessions are served: 'session.type' must be 'realtime'.");
    const modelName = session.model;
    if (typeof modelName !== 'string' || modelName === '') throw badRequest('session.model', "'session.model' is required.");
    const model = services.catalog.model(modelName);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${modelName}' does not exist. GET /v1/models lists the available models.`, { param: 'session.model' });
    if (!keyMayUse(apiKey, model, modelName)) throw modelNotAllowed(model);
    const { model: _model, ...config } = session;
    const configuration = Object.keys(config).length === 0 ? null : { ...config, type: 'realtime' };
    if (configuration !== null && Buffer.byteLength(JSON.stringify(configuration)) > MAX_SESSION_CONFIG_BYTES) {
      throw badRequest('session', `The session configuration is over ${MAX_SESSION_CONFIG_BYTES} bytes as JSON; send the rest with session.update once connected.`);
    }
    const now = services.clock.now();
    const expiresAt = now + lifetimeMs(body, services.config.realtime.clientSecretMs);
    const sessionId = newId('sess');
    // One session per secret: the session id it names is the one its usage rows are grouped under.
    const value = mintClientSecret(key, { keyId: apiKey.id, model: modelName, expiresAt, sessionId, session: configuration, sessions: { uses: 1, createdAt: now, newSessionsUntil: expiresAt } });
    const expiresAtSeconds = Math.floor(expiresAt / 1000);
    sendJson(context, 200, {
      value,
      expires_at: expiresAtSeconds,
      session: { ...config, type: 'realtime', object: 'realtime.session', id: sessionId, model: modelName, expires_at: expiresAtSeconds },
    }, { 'cache-control': 'no-store' });
  };
}
