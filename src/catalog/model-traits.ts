import type { ModelKind } from '../domain/model-records.js';
import type { Modalities, ModelCapabilities } from './catalog-model.js';

/**
 * What the price data does not say about a model: its kind, capabilities, output cap and modalities, by family.
 * The rules follow the providers' model pages; the first matching rule of a list wins. Operators can still route
 * any model the data lacks by declaring it themselves.
 */
export interface ModelTraits {
  kind: ModelKind;
  capabilities: ModelCapabilities | null;
  maxOutputTokens: number | null;
  /** Used when the price data has no context window. */
  contextWindow: number | null;
  modalities: Modalities;
}

interface Rule<T> {
  pattern: RegExp;
  value: T;
}

const first = <T>(rules: ReadonlyArray<Rule<T>>, id: string, fallback: T): T => rules.find((rule) => rule.pattern.test(id))?.value ?? fallback;

/** Models the gateway cannot serve over its HTTP endpoints: realtime/live sessions and legacy completions-only models. */
const UNSERVABLE = /realtime|(^|-)live(-|$)|^(ada|babbage|curie|davinci)$|^text-(ada|babbage|curie|davinci)|^gpt-3\.5-turbo-instruct|^ft:|\.ft-|:extended$|^claude-(v1|2)/;

const KIND_RULES: ReadonlyArray<Rule<ModelKind>> = [
  { pattern: /rerank/, value: 'rerank' },
  { pattern: /embed/, value: 'embedding' },
  { pattern: /moderation/, value: 'moderation' },
  { pattern: /whisper|transcribe|(^|-)tts(-|$)/, value: 'audio' },
  { pattern: /^gpt-image|^dall-e|imagen|-image(-|$)/, value: 'image' },
];

const TEXT: Modalities = { input: ['text'], output: ['text'] };

export function isServable(id: string): boolean {
  return !UNSERVABLE.test(id);
}

export function kindOf(id: string): ModelKind {
  return first(KIND_RULES, id, 'chat');
}

/** Chat models without function calling. */
const NO_TOOLS = /^o1-(mini|preview)|^gpt-4-vision|^gpt-3\.5-turbo-0301|^gpt-3\.5-0301|^chatgpt-4o|search-preview|deep-research|^gemma|^gemini-1\.0-pro-vision|^gpt-4o(-mini)?-audio/;
/** Chat models that take images. */
const VISION = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|gpt-4-vision|gpt-5|gpt-6|chatgpt-4o|o1$|o1-(pro|20)|o3|o4|computer-use|codex-mini|gpt-chat)|^claude-(3|4|sonnet|opus|haiku|fable)|^gemini|^gemma-3|^gemma-4/;
const NO_VISION = /^o3-mini|^gpt-4o(-mini)?-(audio|search)|^gpt-audio/;
/** Chat models that follow a JSON schema for their answer (structured outputs). */
const JSON_SCHEMA = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-6|o1$|o1-(pro|20)|o3|o4|gpt-oss|codex-mini|gpt-chat)|^claude-(sonnet-4-5|sonnet-4-6|sonnet-5|haiku-4-5|opus-4-1|opus-4-[5-9]|opus-5|fable)|^gemini-(1\.5|2|3|flash|pro)/;
const NO_JSON_SCHEMA = /^gpt-4o-2024-05-13|^gpt-4o(-mini)?-(audio|search)|^chatgpt-4o|deep-research/;
/** Models that think before answering (reasoning tokens). */
const REASONING = /^(o1|o3|o4|gpt-5|gpt-6|gpt-oss|codex-mini|computer-use)|^claude-(3-7|sonnet-3\.7|sonnet-4|sonnet-5|opus-4|opus-5|haiku-4|fable|4-)|^gemini-(2\.5|3|flash-thinking)/;
const NO_REASONING = /^gpt-5(\.\d)?-chat|^gpt-5-image|^gpt-5\.4-image/;

const MAX_OUTPUT: ReadonlyArray<Rule<number>> = [
  { pattern: /^gpt-4o-mini|^gpt-4o|^chatgpt-4o/, value: 16_384 },
  { pattern: /^gpt-4\.1/, value: 32_768 },
  { pattern: /^gpt-4\.5/, value: 16_384 },
  { pattern: /^gpt-4-turbo|^gpt-4-vision|^gpt-4-1106|^gpt-4-0125/, value: 4_096 },
  { pattern: /^gpt-4(-32k)?($|-0)/, value: 8_192 },
  { pattern: /^gpt-3\.5/, value: 4_096 },
  { pattern: /^gpt-5(\.\d)?-chat/, value: 16_384 },
  { pattern: /^(gpt-5|gpt-6|o1-pro|o3|o4|codex-mini)/, value: 128_000 },
  { pattern: /^o1-mini/, value: 65_536 },
  { pattern: /^o1/, value: 100_000 },
  { pattern: /^gpt-oss/, value: 131_072 },
  { pattern: /^claude-opus-4-(0|1)|^claude-opus-4$|^claude-4-opus/, value: 32_000 },
  { pattern: /^claude-opus-4-[6-9]|^claude-opus-5|^claude-fable/, value: 128_000 },
  { pattern: /^claude-(sonnet-4|sonnet-5|haiku-4|opus-4-5|3-7|sonnet-3\.7|4-sonnet)/, value: 64_000 },
  { pattern: /^claude-3-5/, value: 8_192 },
  { pattern: /^claude-3/, value: 4_096 },
  { pattern: /^gemini-(2\.0|1\.5)|^gemini-flash-1\.5|^gemini-pro-1\.5/, value: 8_192 },
  { pattern: /^gemini-(2\.5|3|flash|pro-latest)/, value: 65_536 },
  { pattern: /^gemini-pro$|^gemini-1\.0/, value: 2_048 },
  { pattern: /^gemma/, value: 8_192 },
];

/** Context windows for models whose price data gives none. */
const CONTEXT: ReadonlyArray<Rule<number>> = [
  { pattern: /^gpt-4o(-mini)?-(audio|search)|^gpt-audio|^chatgpt-4o|^gpt-4o|^gpt-4-turbo|^o1-(mini|preview)/, value: 128_000 },
  { pattern: /^gpt-4\.1/, value: 1_047_576 },
  { pattern: /^gpt-5(\.\d)?-chat/, value: 128_000 },
  { pattern: /^gpt-5|^gpt-6/, value: 400_000 },
  { pattern: /^(o1|o3|o4|codex-mini|computer-use)/, value: 200_000 },
  { pattern: /^gpt-oss/, value: 131_072 },
  { pattern: /^claude/, value: 200_000 },
  { pattern: /^gemini-(1\.5-pro|pro-1\.5)/, value: 2_097_152 },
  { pattern: /^gemini/, value: 1_048_576 },
  { pattern: /^text-embedding|embed/, value: 8_192 },
];

function chatModalities(id: string, capabilities: ModelCapabilities): Modalities {
  const input: Array<'text' | 'image' | 'audio' | 'video'> = ['text'];
  if (capabilities.vision) input.push('image');
  const audioIn = /^gemini|audio/.test(id);
  if (audioIn) input.push('audio');
  if (/^gemini/.test(id)) input.push('video');
  return { input, output: /audio/.test(id) ? ['text', 'audio'] : ['text'] };
}

function modalitiesOf(kind: ModelKind, id: string, capabilities: ModelCapabilities | null): Modalities {
  switch (kind) {
    case 'chat':
      return capabilities === null ? TEXT : chatModalities(id, capabilities);
    case 'embedding':
      return { input: /gemini-embedding-2/.test(id) ? ['text', 'image', 'audio', 'video'] : ['text'], output: ['embedding'] };
    case 'image':
      return { input: ['text', 'image'], output: ['image'] };
    case 'audio':
      return /tts/.test(id) ? { input: ['text'], output: ['audio'] } : { input: ['audio'], output: ['text'] };
    case 'moderation':
      return { input: /omni|^moderation$/.test(id) ? ['text', 'image'] : ['text'], output: ['text'] };
    case 'rerank':
      return { input: ['text'], output: ['text'] };
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown model kind ${String(unreachable)}`);
    }
  }
}

function chatCapabilities(id: string): ModelCapabilities {
  return {
    tools: !NO_TOOLS.test(id),
    vision: VISION.test(id) && !NO_VISION.test(id),
    jsonSchema: JSON_SCHEMA.test(id) && !NO_JSON_SCHEMA.test(id),
    reasoning: REASONING.test(id) && !NO_REASONING.test(id),
  };
}

/** The traits of a model id of the bundled data (lower-case ids, as the providers spell them). */
export function traitsOf(id: string): ModelTraits {
  const kind = kindOf(id);
  const capabilities = kind === 'chat' ? chatCapabilities(id) : null;
  return {
    kind,
    capabilities,
    maxOutputTokens: kind === 'chat' ? first(MAX_OUTPUT, id, null as number | null) : null,
    contextWindow: kind === 'chat' || kind === 'embedding' ? first(CONTEXT, id, null as number | null) : null,
    modalities: modalitiesOf(kind, id, capabilities),
  };
}
