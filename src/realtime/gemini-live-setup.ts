import type { WebSocket } from 'ws';
import { GatewayError } from '../errors/gateway-error.js';
import { CLOSE } from './realtime-events.js';

/** The caller's `setup` must arrive this soon after the handshake. */
export const SETUP_TIMEOUT_MS = 10_000;

/** The close codes a Gemini Live session ends with when it cannot open, as Google's server uses them. */
export function geminiCloseCode(error: GatewayError): number {
  // Google closes with 1008 for a model it does not serve, as for a key not allowed to use one.
  if (error.code === 'model_not_found') return CLOSE.policy;
  if (error.status === 400 || error.status === 413 || error.status === 422) return CLOSE.invalidPayload;
  if (error.status === 429 || error.status === 503) return CLOSE.tryAgainLater;
  if (error.status >= 500) return CLOSE.internal;
  return CLOSE.policy;
}

/** The caller's first message, `{setup: {model, …}}`: the model (without `models/`) and the setup as sent. */
export interface LiveSetup {
  modelName: string;
  setup: Record<string, unknown>;
}

function invalidSetup(message: string): GatewayError {
  return new GatewayError('bad_request', message, { param: 'setup' });
}

/** Reads the setup from the caller's first message; the caller's reading pauses after it until the session starts. */
export function readSetup(client: WebSocket, timeoutMs: number): Promise<LiveSetup> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(invalidSetup(`No setup message within ${Math.round(timeoutMs / 1000)} seconds: the first message must be {"setup": {"model": "models/<model>"}}.`));
    }, timeoutMs);
    const onClose = (): void => {
      cleanup();
      reject(new GatewayError('bad_request', 'The caller left before the session opened.'));
    };
    const onMessage = (data: Buffer | ArrayBuffer | Buffer[]): void => {
      cleanup();
      client.pause();
      const frame = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      let message: unknown;
      try {
        message = JSON.parse(frame.toString('utf8'));
      } catch {
        reject(invalidSetup('The first message is not JSON: it must be {"setup": {"model": "models/<model>"}}.'));
        return;
      }
      const setup = typeof message === 'object' && message !== null ? (message as { setup?: unknown }).setup : undefined;
      if (typeof setup !== 'object' || setup === null || Array.isArray(setup)) {
        reject(invalidSetup('The first message must be {"setup": {"model": "models/<model>"}}.'));
        return;
      }
      const model = (setup as { model?: unknown }).model;
      if (typeof model !== 'string' || model.replace(/^models\//, '') === '') {
        reject(invalidSetup("'setup.model' is required: \"models/<model>\"."));
        return;
      }
      resolve({ modelName: model.replace(/^models\//, ''), setup: setup as Record<string, unknown> });
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      client.off('message', onMessage);
      client.off('close', onClose);
    };
    client.on('message', onMessage);
    client.on('close', onClose);
  });
}
