import { RequestGuard } from '../guardrail-policies/request-guard.js';
import type { MultipartForm } from '../multipart/read-multipart-form.js';
import type { MeteredCall } from './metered-frame.js';
import type { ModerationCheck } from './moderation-check.js';

/**
 * The input guardrails of a request that carries caller text but no chat (embeddings, rerank, image prompts, speech
 * input): the policies bound to its model, account, project and key, resolved as a chat request's are, run on
 * `texts` before anything is held or sent, masking them in place or refusing with `guardrail_blocked`. Null when no
 * policy is bound (nothing else is done then). What ran goes to the usage row; the caller's answer carries it in
 * `x-gateway-guardrails` (`headers()` of the guard returned).
 */
export async function guardCallerTexts(call: MeteredCall, moderate: ModerationCheck, model: string, texts: () => readonly { text: string }[]): Promise<RequestGuard | null> {
  const { services } = call;
  const policies = services.guardrails.forRequest(model, { accountId: call.account.id, projectId: call.key.projectId ?? null, keyId: call.key.id });
  if (policies === null) return null;
  const resolved = await policies;
  if (resolved === null) return null;
  const guard = new RequestGuard(resolved, call.meter.guardrails, {
    model,
    stream: false,
    webhooks: services.guardrails.webhooks,
    moderate: (settings, text) => moderate(settings, text, { key: call.key, account: call.account }),
  });
  await guard.checkTexts(texts());
  return guard;
}

/**
 * The input guardrails on a multipart form's text field (an image edit's or a transcription's `prompt`), as
 * `guardCallerTexts` runs them: every value the field was sent with is checked, and a masked value is written into
 * the form, so the form rebuilt for the upstream carries it while its files go as they were spooled, byte for byte.
 * Null when the form has no such field or no policy is bound.
 */
export async function guardFormField(call: MeteredCall, moderate: ModerationCheck, model: string, form: MultipartForm, name: string): Promise<RequestGuard | null> {
  const entries = form.fields.filter((field) => field.name === name);
  if (entries.length === 0) return null;
  const texts = entries.map((field) => ({ text: field.value }));
  const guard = await guardCallerTexts(call, moderate, model, () => texts);
  texts.forEach((text, index) => {
    (entries[index] as { value: string }).value = text.text;
  });
  return guard;
}

/** The `x-gateway-guardrails` header of a guarded request (none when no policy was bound). */
export function guardHeaders(guard: RequestGuard | null): Record<string, string> {
  return guard === null ? {} : guard.headers();
}
