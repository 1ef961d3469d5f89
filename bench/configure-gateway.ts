/** Sets the gateway up for the benchmark through its admin API, as the operator contract describes. */
import { ANTHROPIC_UPSTREAM_KEY, ANTHROPIC_UPSTREAM_MODEL, BENCH_CLAUDE_MODEL, BENCH_GEMINI_MODEL, BENCH_MODEL, BENCH_SLOW_MODEL, GEMINI_UPSTREAM_KEY, GEMINI_UPSTREAM_MODEL, UPSTREAM_KEY } from './requests.js';

export async function adminCall(base: string, token: string, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${method} ${path} answered non-JSON: ${text.slice(0, 200)}`);
  }
}

/** Finds a field in an admin answer, directly or under a `data`/entity wrapper. */
export function pick(obj: Record<string, unknown>, field: string): unknown {
  if (obj[field] !== undefined) return obj[field];
  for (const v of Object.values(obj)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && (v as Record<string, unknown>)[field] !== undefined) {
      return (v as Record<string, unknown>)[field];
    }
  }
  return undefined;
}

export async function configureGateway(base: string, adminToken: string, upstreamUrl: string): Promise<string> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-upstream',
    type: 'openai',
    base_url: upstreamUrl,
    api_key: UPSTREAM_KEY,
    models: [BENCH_MODEL],
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  const account = await adminCall(base, adminToken, 'POST', '/admin/accounts', { email: 'bench@example.com' });
  const accountId = pick(account, 'id');
  if (typeof accountId !== 'string' && typeof accountId !== 'number') throw new Error(`POST /admin/accounts: no id in ${JSON.stringify(account)}`);
  const enc = encodeURIComponent(String(accountId));
  await adminCall(base, adminToken, 'POST', `/admin/accounts/${enc}/credits`, { amount_usd: 1_000_000 });
  // The account's own limits, far above the load (the default tier's would refuse it), counted on every request.
  await adminCall(base, adminToken, 'PATCH', `/admin/accounts/${enc}`, { rpm: 100_000_000, tpm: 1_000_000_000_000 });
  // Limits on, set far above the load, so the limiter's work is part of every measured request.
  const key = await adminCall(base, adminToken, 'POST', `/admin/accounts/${enc}/keys`, { rpm: 100_000_000, tpm: 1_000_000_000_000, concurrency: 10_000 });
  const secret = pick(key, 'key');
  if (typeof secret !== 'string' || secret === '') throw new Error(`POST /admin/accounts/:id/keys: no key in the answer`);
  return secret;
}

/** The translated route: `bench-claude` on an `anthropic` channel (base URL without /v1), priced like bench-model. */
export async function configureTranslation(base: string, adminToken: string, anthropicBaseUrl: string): Promise<void> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-anthropic-upstream',
    type: 'anthropic',
    base_url: anthropicBaseUrl,
    api_key: ANTHROPIC_UPSTREAM_KEY,
    models: { [BENCH_CLAUDE_MODEL]: ANTHROPIC_UPSTREAM_MODEL },
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_CLAUDE_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
}

/** The slow-streams route: `bench-slow` on an `openai` channel whose mock paces its chunks. */
export async function configureSlowStreams(base: string, adminToken: string, slowUpstreamUrl: string): Promise<void> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-slow-upstream',
    type: 'openai',
    base_url: slowUpstreamUrl,
    api_key: UPSTREAM_KEY,
    models: { [BENCH_SLOW_MODEL]: BENCH_MODEL },
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_SLOW_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
}

/** The agent-sized scenario translated to Gemini: `bench-gemini` on a `gemini` channel, priced like bench-model. */
export async function configureGemini(base: string, adminToken: string, geminiBaseUrl: string): Promise<void> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-gemini-upstream',
    type: 'gemini',
    base_url: geminiBaseUrl,
    api_key: GEMINI_UPSTREAM_KEY,
    models: { [BENCH_GEMINI_MODEL]: GEMINI_UPSTREAM_MODEL },
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_GEMINI_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
}
