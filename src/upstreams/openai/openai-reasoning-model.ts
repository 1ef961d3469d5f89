const REASONING_FAMILIES = /^(o\d|gpt-5)/;
const CHAT_VARIANT = /-chat(-|$)/;

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later o-/gpt-5 releases) reject `max_tokens`, sampling
 * parameters other than the defaults, and `stop`. They are recognised by the upstream model name: its last path
 * segment (so `openai/o3` behind an OpenAI-compatible router counts) starting with `o<digit>` or `gpt-5`, except
 * the `-chat` variants (gpt-5-chat-latest), which are ordinary chat models. Azure deployment names that hide the
 * model are listed in the channel's `settings.reasoning_models`.
 */
export function isOpenAIReasoningModel(upstreamModel: string, listed: readonly string[] = []): boolean {
  if (listed.includes(upstreamModel)) return true;
  const name = upstreamModel.slice(upstreamModel.lastIndexOf('/') + 1).toLowerCase();
  return REASONING_FAMILIES.test(name) && !CHAT_VARIANT.test(name);
}

/** `settings.reasoning_models`: upstream model (deployment) names to treat as reasoning models. */
export function listedReasoningModels(settings: Record<string, unknown>): string[] {
  const listed = settings.reasoning_models;
  return Array.isArray(listed) ? listed.filter((name): name is string => typeof name === 'string') : [];
}
