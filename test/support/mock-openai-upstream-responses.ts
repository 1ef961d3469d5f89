/**
 * Deterministic answers of the mock OpenAI upstream: what the "model" says for a validated request,
 * the usage it reports, and the chat.completion / chat.completion.chunk objects carrying it.
 *
 * Rules (documented for test authors):
 * - Text answer: `Echo: <last user message text>` (text truncated to 200 characters); when the last
 *   message is a `tool` message: `Tool <name> returned: <content>`; with no user message: a greeting.
 *   `response_format` json_object gives `{"echo":"…"}`, json_schema an object filled from the schema.
 * - Tool call: when `tools` are given, tool_choice is not `none`, and either tool_choice forces a
 *   function / is `required`, or the last message is a user message mentioning "weather". Locations
 *   after "in"/"for"/"at" ("weather in Paris and Tokyo") give one call each (parallel unless
 *   `parallel_tool_calls: false`).
 * - Tokens: see estimateTokens/splitIntoTokens; stop sequences and max(_completion)_tokens truncate.
 * - Reasoning models (o*, gpt-5*) spend reasoning tokens (effort minimal 0, low 16, medium 64, high 192)
 *   counted in completion_tokens and in the max_completion_tokens budget.
 */
import { requestedToolName } from './mock-tool-request.js';
import { estimateTokens, randomId, splitIntoTokens, SYSTEM_FINGERPRINT, isReasoningModel } from './mock-openai-upstream-wire.js';
import { isObject, type ChatMessage, type ChatRequest, type JsonObject } from './mock-openai-upstream-validate.js';

export interface PlannedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface AnswerPlan {
  text: string | null;
  toolCalls: PlannedToolCall[];
  finishReason: FinishReason;
  /** completion tokens of one choice, reasoning included */
  completionTokens: number;
  reasoningTokens: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

export interface UsageOverride {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

const MAX_ECHO_CHARS = 200;

/** Plain text of a message's content (text parts joined; images, audio and files ignored). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObject(p) && (p.type === 'text' || p.type === 'refusal') ? String(p.text ?? p.refusal ?? '') : ''))
    .join('');
}

function mediaParts(content: unknown): number {
  return Array.isArray(content) ? content.filter((p) => isObject(p) && p.type !== 'text' && p.type !== 'refusal').length : 0;
}

/** Tokens one message adds to the prompt: 3 of framing, its text, name, tool calls, 85 per image/media part. */
export function messageTokens(m: ChatMessage): number {
  let tokens = 3 + estimateTokens(contentText(m.content)) + 85 * mediaParts(m.content);
  if (m.name) tokens += 1 + estimateTokens(m.name);
  for (const tc of m.tool_calls ?? []) tokens += 3 + estimateTokens(tc.function.name) + estimateTokens(tc.function.arguments);
  return tokens;
}

/** Tokens of the tool definitions (their JSON text), counted in the prompt. */
export function toolsTokens(body: JsonObject): number {
  return Array.isArray(body.tools) && body.tools.length > 0 ? estimateTokens(JSON.stringify(body.tools)) : 0;
}

/** prompt_tokens the mock reports: 3 of priming + each message + tool definitions. */
export function countPromptTokens(req: Pick<ChatRequest, 'messages' | 'body'>): number {
  return 3 + toolsTokens(req.body) + req.messages.reduce((sum, m) => sum + messageTokens(m), 0);
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

function lastUserText(messages: ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') return contentText(messages[i]!.content);
  }
  return undefined;
}

/**
 * Fills a JSON schema with deterministic values: strings get `hint` (with `placesOnly`, only
 * location-like property names do, other strings get "example"), numbers 1, booleans true, enums their first value.
 */
export function fillSchema(schema: unknown, hint: string, placesOnly = false, depth = 0): unknown {
  if (!isObject(schema) || depth > 5) return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return hint;
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [fillSchema(schema.items, hint, placesOnly, depth + 1)];
    default: {
      const props = isObject(schema.properties) ? schema.properties : {};
      const keys = Array.isArray(schema.required) && schema.required.length > 0 ? (schema.required as string[]) : Object.keys(props);
      const out: JsonObject = {};
      for (const key of keys) {
        const sub = props[key];
        const isPlace = /loc|city|place|where|address|region|country|query/i.test(key);
        const plainString = isObject(sub) && sub.type === 'string' && !Array.isArray(sub.enum);
        out[key] = placesOnly && plainString && !isPlace ? 'example' : fillSchema(sub ?? { type: 'string' }, hint, placesOnly, depth + 1);
      }
      return out;
    }
  }
}

function locationsIn(text: string): string[] {
  const m = /\b(?:in|for|at)\s+([^?.!\n]+)/i.exec(text);
  const found = (m?.[1] ?? '')
    .split(/\s*(?:,|\band\b|&)\s*/i)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return found.length > 0 ? found.slice(0, 4) : ['San Francisco'];
}

function planToolCalls(req: ChatRequest): PlannedToolCall[] {
  if (req.tools.length === 0 || req.toolChoice === 'none') return [];
  const last = req.messages[req.messages.length - 1]!;
  const text = last.role === 'user' ? contentText(last.content) : '';
  const forced = typeof req.toolChoice === 'object' ? req.toolChoice.name : undefined;
  const named = last.role === 'user' ? requestedToolName(text, req.tools.map((t) => t.name)) : undefined;
  const wants = forced !== undefined || named !== undefined || req.toolChoice === 'required' || (last.role === 'user' && /weather/i.test(text));
  if (!wants) return [];
  const tool =
    req.tools.find((t) => t.name === forced) ??
    req.tools.find((t) => t.name === named) ??
    (/weather/i.test(text) ? req.tools.find((t) => /weather/i.test(t.name)) : undefined) ??
    req.tools[0]!;
  const places = locationsIn(text);
  const chosen = req.parallelToolCalls && named === undefined ? places : places.slice(0, 1);
  return chosen.map((place) => ({
    id: randomId('call_', 24),
    name: tool.name,
    arguments: JSON.stringify(fillSchema(tool.parameters ?? { type: 'object', properties: {} }, place, true)),
  }));
}

function plannedText(req: ChatRequest): string {
  const last = req.messages[req.messages.length - 1]!;
  let base: string;
  if (last.role === 'tool') {
    let name = 'tool';
    for (let i = req.messages.length - 1; i >= 0; i--) {
      const call = req.messages[i]!.tool_calls?.find((tc) => tc.id === last.tool_call_id);
      if (call) {
        name = call.function.name;
        break;
      }
    }
    base = `Tool ${name} returned: ${truncate(contentText(last.content), MAX_ECHO_CHARS)}`;
  } else {
    const user = lastUserText(req.messages);
    base = user === undefined ? 'Hello! How can I help you today?' : `Echo: ${truncate(user, MAX_ECHO_CHARS)}`;
  }
  if (req.responseFormat.type === 'json_object') return JSON.stringify({ echo: base });
  if (req.responseFormat.type === 'json_schema') return JSON.stringify(fillSchema(req.responseFormat.schema, base));
  return base;
}

function reasoningBudget(req: ChatRequest): number {
  if (!isReasoningModel(req.model)) return 0;
  switch (req.reasoningEffort) {
    case 'none':
    case 'minimal':
      return 0;
    case 'low':
      return 16;
    case 'high':
      return 192;
    default:
      return 64;
  }
}

/** Decides what one choice of the answer contains. */
export function planAnswer(req: ChatRequest): AnswerPlan {
  const limit = req.maxTokens ?? Number.POSITIVE_INFINITY;
  const reasoningTokens = Math.min(reasoningBudget(req), limit);
  const toolCalls = planToolCalls(req);
  if (toolCalls.length > 0) {
    const tokens = toolCalls.reduce((s, tc) => s + 3 + estimateTokens(tc.name) + splitIntoTokens(tc.arguments).length, 0);
    return { text: null, toolCalls, finishReason: 'tool_calls', completionTokens: reasoningTokens + tokens, reasoningTokens };
  }
  let text = plannedText(req);
  let finishReason: FinishReason = 'stop';
  for (const s of req.stop) {
    const at = text.indexOf(s);
    if (at >= 0) text = text.slice(0, at);
  }
  let pieces = splitIntoTokens(text);
  const room = limit - reasoningTokens;
  if (pieces.length > room) {
    pieces = pieces.slice(0, Math.max(0, room));
    text = pieces.join('');
    finishReason = 'length';
  }
  return { text, toolCalls: [], finishReason, completionTokens: reasoningTokens + pieces.length, reasoningTokens };
}

export function buildUsage(
  promptTokens: number,
  plan: AnswerPlan,
  n: number,
  cachedTokens: number,
  override: UsageOverride | null,
): Usage {
  const prompt = override?.prompt_tokens ?? promptTokens;
  const completion = override?.completion_tokens ?? plan.completionTokens * n;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: override?.cached_tokens ?? cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: override?.reasoning_tokens ?? plan.reasoningTokens * n,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
  serviceTier: string;
}

export function newCompletionMeta(req: ChatRequest): CompletionMeta {
  const tier = req.body.service_tier;
  return {
    id: randomId('chatcmpl-', 29),
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    serviceTier: tier === 'flex' || tier === 'priority' || tier === 'scale' ? tier : 'default',
  };
}

/** The non-streaming `chat.completion` object. */
export function buildCompletion(meta: CompletionMeta, plan: AnswerPlan, n: number, usage: Usage): JsonObject {
  const choices = Array.from({ length: n }, (_, index) => {
    const message: JsonObject = { role: 'assistant', content: plan.text, refusal: null, annotations: [] };
    if (plan.toolCalls.length > 0) {
      message.tool_calls = plan.toolCalls.map((tc) => ({ id: tc.id, type: 'function', function: { name: tc.name, arguments: tc.arguments } }));
    }
    return { index, message, logprobs: null, finish_reason: plan.finishReason };
  });
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices,
    usage,
    service_tier: meta.serviceTier,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

/**
 * The `chat.completion.chunk` objects of a streamed answer, in order (without `[DONE]`). With
 * includeUsage every chunk carries `usage: null` and a last chunk with `choices: []` carries the usage.
 */
export function buildChunks(meta: CompletionMeta, plan: AnswerPlan, n: number, usage: Usage, includeUsage: boolean): JsonObject[] {
  const chunk = (choices: JsonObject[], last?: Usage): JsonObject => {
    const c: JsonObject = {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      service_tier: meta.serviceTier,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
    };
    if (includeUsage) c.usage = last ?? null;
    return c;
  };
  const choice = (index: number, delta: JsonObject, finish: FinishReason | null = null): JsonObject => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const out: JsonObject[] = [];
  for (let index = 0; index < n; index++) {
    if (plan.toolCalls.length > 0) {
      plan.toolCalls.forEach((tc, k) => {
        const head = { index: k, id: tc.id, type: 'function', function: { name: tc.name, arguments: '' } };
        out.push(chunk([choice(index, k === 0 ? { role: 'assistant', content: null, tool_calls: [head], refusal: null } : { tool_calls: [head] })]));
        for (const frag of splitIntoTokens(tc.arguments)) {
          out.push(chunk([choice(index, { tool_calls: [{ index: k, function: { arguments: frag } }] })]));
        }
      });
    } else {
      out.push(chunk([choice(index, { role: 'assistant', content: '', refusal: null })]));
      for (const piece of splitIntoTokens(plan.text ?? '')) out.push(chunk([choice(index, { content: piece })]));
    }
    out.push(chunk([choice(index, {}, plan.finishReason)]));
  }
  if (includeUsage) out.push(chunk([], usage));
  return out;
}
