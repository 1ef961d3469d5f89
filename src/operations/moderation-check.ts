/**
 * A moderation guardrail's check: the text goes to `POST /v1/moderations` through the gateway's own route, in
 * process (the same routing, admission, usage row and settlement as a caller's request), made and billed as the
 * request's own key and account, or as the operator's key the policy names. The model's categories decide: a
 * category counts when its score reaches the policy's threshold, or, without one, when the model flags it; only the
 * policy's categories count when it names some. A refusal, a fault or no answer in time is no verdict.
 */
import { keyRefusalOf } from '../auth/key-verifier.js';
import { openAIFamily } from '../codecs/families.js';
import type { Account, ApiKey } from '../domain/records.js';
import { runInProcess } from '../http/in-process-request.js';
import type { RouteHandler } from '../http/request-context.js';
import { DEFAULT_MODERATION_MODEL } from '../guardrails/guardrail-defaults.js';
import type { ModerationSettings } from '../guardrails/settings.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { moderationsRoute } from './moderations.js';

/** What a moderation policy found: the categories that counted, or why there is no verdict (never text). */
export type ModerationVerdict = { kind: 'passed' } | { kind: 'failed'; found: Record<string, number> } | { kind: 'unavailable'; reason: string };

export type ModerationCheck = (settings: ModerationSettings, text: string, caller: { key: ApiKey; account: Account }) => Promise<ModerationVerdict>;

const PATH = '/v1/moderations';
const DEFAULT_TIMEOUT_MS = 10_000;

/** The check, with the moderation route built once for the services. */
export function moderationCheck(services: GatewayServices): ModerationCheck {
  let handler: RouteHandler | null = null;
  return async (settings, text, requestCaller) => {
    handler ??= moderationsRoute(services);
    const caller = settings.billed_to === 'operator' ? await operatorCaller(services, settings.operator_key_id ?? '') : requestCaller;
    if (caller === null) return { kind: 'unavailable', reason: 'the operator key for moderation cannot be used' };
    const model = settings.model ?? DEFAULT_MODERATION_MODEL;
    const timeoutMs = settings.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    // Past the timeout the check is given up as a caller leaves: the route sees its response closed and drops the
    // upstream call, so an abandoned moderation call does not keep running (nor holding the gateway's shutdown).
    const giveUp = new AbortController();
    const call = runInProcess({
      handler,
      family: openAIFamily,
      path: PATH,
      requestId: newId('req', services.clock.now()),
      caller,
      body: JSON.stringify({ model, input: text }),
      signal: giveUp.signal,
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    const answer = await Promise.race([call, timedOut]).finally(() => clearTimeout(timer));
    if (answer === null) {
      giveUp.abort();
      return { kind: 'unavailable', reason: `no answer within ${timeoutMs} ms` };
    }
    if (answer.status !== 200) return { kind: 'unavailable', reason: `moderation answered ${answer.status}` };
    return verdictOf(answer.body.toString('utf8'), settings);
  };
}

/** The operator's key and its account, when it may still be used. */
async function operatorCaller(services: GatewayServices, keyId: string): Promise<{ key: ApiKey; account: Account } | null> {
  const key = await services.storage.keys.getById(keyId);
  const account = key === null ? null : await services.storage.accounts.getById(key.accountId);
  if (key === null || account === null || keyRefusalOf(key, account, services.clock.now()) !== null) return null;
  return { key, account };
}

interface ModerationResult {
  flagged?: unknown;
  categories?: Record<string, unknown>;
  category_scores?: Record<string, unknown>;
}

function verdictOf(text: string, settings: ModerationSettings): ModerationVerdict {
  let results: ModerationResult[];
  try {
    const parsed = JSON.parse(text) as { results?: unknown };
    if (!Array.isArray(parsed.results) || parsed.results.length === 0) return { kind: 'unavailable', reason: 'moderation answer has no results' };
    results = parsed.results as ModerationResult[];
  } catch {
    return { kind: 'unavailable', reason: 'moderation answer is not JSON' };
  }
  const wanted = settings.categories === undefined ? null : new Set(settings.categories);
  const found: Record<string, number> = {};
  for (const result of results) {
    const names = new Set([...Object.keys(result.categories ?? {}), ...Object.keys(result.category_scores ?? {})]);
    for (const name of names) {
      if (wanted !== null && !wanted.has(name)) continue;
      const score = result.category_scores?.[name];
      const counts = settings.threshold === undefined ? result.categories?.[name] === true : typeof score === 'number' && score >= settings.threshold;
      if (counts) found[name] = (found[name] ?? 0) + 1;
    }
  }
  return Object.keys(found).length === 0 ? { kind: 'passed' } : { kind: 'failed', found };
}
