/**
 * The mock OpenAI upstream's Responses API (POST /v1/responses, POST /v1/responses/input_tokens, GET/DELETE
 * /v1/responses/{id}): the request is
 * validated like api.openai.com does (unknown parameters, types, previous_response_id), turned into the chat
 * conversation the chat answer rules already know (mock-openai-upstream-responses.ts: echo text, tool calls on
 * "weather", tool results echoed back), and answered as a `response` object or as the Responses event sequence.
 *
 * State: responses created with `store` not false are kept (by id) so that `previous_response_id` continues them
 * and GET returns them, as OpenAI does.
 */
import { encryptedReasoning, invalidEncryptedContent, invalidRequest, isIssuedEncryptedReasoning, isReasoningModel, MockHttpError, errorBody, modelNotFoundError, randomId, splitIntoTokens } from './mock-openai-upstream-wire.js';
import { isObject, type ChatMessage, type ChatRequest, type JsonObject, type ToolChoice, type ToolDef } from './mock-openai-upstream-validate.js';
import { buildUsage, countPromptTokens, planAnswer, type UsageOverride } from './mock-openai-upstream-responses.js';

/**
 * Top-level parameters api.openai.com accepts on POST /v1/responses (from the official SDK's types, plus
 * `client_metadata`, which the Codex CLI sends to OpenAI on every turn).
 */
export const KNOWN_RESPONSES_PARAMS: ReadonlySet<string> = new Set([
  'background', 'client_metadata', 'context_management', 'conversation', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls',
  'metadata', 'model', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key', 'prompt_cache_retention',
  'reasoning', 'safety_identifier', 'service_tier', 'store', 'stream', 'stream_options', 'temperature', 'text', 'tool_choice',
  'tools', 'top_logprobs', 'top_p', 'truncation', 'user',
]);

/** Top-level parameters of POST /v1/responses/input_tokens (from the official SDK's InputTokenCountParams). */
export const KNOWN_INPUT_TOKENS_PARAMS: ReadonlySet<string> = new Set([
  'conversation', 'input', 'instructions', 'model', 'parallel_tool_calls', 'personality', 'previous_response_id', 'reasoning', 'text',
  'tool_choice', 'tools', 'truncation',
]);

export interface StoredResponse {
  response: JsonObject;
  /** The conversation up to and including this response's answer, in chat form. */
  messages: ChatMessage[];
}

export type ResponsesAnswer = { kind: 'json'; body: JsonObject } | { kind: 'stream'; events: JsonObject[] };

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function mediaCount(content: unknown): number {
  return Array.isArray(content) ? content.filter((part) => isObject(part) && (part.type === 'input_image' || part.type === 'input_file')).length : 0;
}

/** Input items → chat messages (instructions first); images become image_url parts so prompt tokens count them. */
function toMessages(body: JsonObject, previous: ChatMessage[]): ChatMessage[] {
  const messages: ChatMessage[] = previous.filter((m) => m.role !== 'system');
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) {
    input.forEach((item: unknown, index) => {
      if (!isObject(item)) throw invalidRequest(`Invalid type for 'input[${index}]': expected an object.`, `input[${index}]`, 'invalid_type');
      const type = item.type ?? 'message';
      if (type === 'message') {
        const role = item.role;
        if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
          throw invalidRequest(`Invalid value: '${String(role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `input[${index}].role`, 'invalid_value');
        }
        const images = Array.from({ length: mediaCount(item.content) }, () => ({ type: 'image_url', image_url: { url: 'x' } }));
        messages.push({ role, content: images.length > 0 ? [{ type: 'text', text: textOfContent(item.content) }, ...images] : textOfContent(item.content) });
      } else if (type === 'function_call') {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
          throw invalidRequest(`Missing required parameter: 'input[${index}].call_id'.`, `input[${index}].call_id`, 'missing_required_parameter');
        }
        const last = messages.at(-1);
        const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
        if (last?.role === 'assistant' && last.tool_calls !== undefined) last.tool_calls.push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      } else if (type === 'function_call_output') {
        const known = messages.some((m) => m.tool_calls?.some((call) => call.id === item.call_id));
        if (!known) throw invalidRequest(`No tool call found for function call output with call_id ${String(item.call_id)}.`, 'input', null);
        messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: textOfContent(item.output) });
      } else if (type === 'reasoning') {
        // Reasoning items are context for the model and add nothing to the mock's answer, but their encrypted
        // content must be the mock's own: OpenAI refuses reasoning state it cannot decrypt.
        const encrypted = item.encrypted_content;
        if (typeof encrypted === 'string' && !isIssuedEncryptedReasoning(encrypted)) throw invalidEncryptedContent(encrypted, item.id);
      } else {
        throw invalidRequest(`Invalid value: '${String(type)}'.`, `input[${index}].type`, 'invalid_value');
      }
    });
  } else if (input !== undefined) {
    throw invalidRequest("Invalid type for 'input': expected one of a string or array of input items.", 'input', 'invalid_type');
  }
  if (typeof body.instructions === 'string') messages.unshift({ role: 'system', content: body.instructions });
  if (messages.length === 0) throw invalidRequest("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  return messages;
}

/** Tools OpenAI runs itself; the mock accepts them and runs web search (see the web search module). */
const HOSTED_TOOLS = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'file_search', 'code_interpreter', 'image_generation', 'computer_use_preview', 'mcp', 'local_shell']);

function hasWebSearch(body: JsonObject): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool: unknown) => isObject(tool) && typeof tool.type === 'string' && tool.type.startsWith('web_search'));
}

function hasFileSearch(body: JsonObject): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool: unknown) => isObject(tool) && tool.type === 'file_search');
}

/**
 * OpenAI's hosted searches as output items: "<n> times" in the text runs n web searches (at most `max_tool_calls`),
 * "open the page" adds an `open_page` action (a web_search_call that is no search); "in my files" runs a file search.
 */
function hostedSearchItems(body: JsonObject, text: string): JsonObject[] {
  const items: JsonObject[] = [];
  if (hasFileSearch(body) && /in my files/i.test(text)) {
    items.push({ id: randomId('fs_', 48), type: 'file_search_call', status: 'completed', queries: [text.slice(0, 100)], results: null });
  }
  if (hasWebSearch(body) && /search/i.test(text)) {
    const asked = Number(/\b(\d+) times\b/i.exec(text)?.[1] ?? 1);
    const searches = Math.max(1, typeof body.max_tool_calls === 'number' ? Math.min(asked, body.max_tool_calls) : asked);
    for (let index = 0; index < searches; index++) {
      const query = index === 0 ? text.slice(0, 100) : `${text.slice(0, 80)} (refined ${index})`;
      items.push({ id: randomId('ws_', 48), type: 'web_search_call', status: 'completed', action: { type: 'search', query } });
    }
    if (/open the page/i.test(text)) items.push({ id: randomId('ws_', 48), type: 'web_search_call', status: 'completed', action: { type: 'open_page', url: 'https://example.com/unigate-release' } });
  }
  return items;
}

function toolsOf(body: JsonObject): ToolDef[] {
  if (body.tools === undefined) return [];
  if (!Array.isArray(body.tools)) throw invalidRequest("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
  return body.tools.flatMap((tool: unknown, index): ToolDef[] => {
    if (isObject(tool) && HOSTED_TOOLS.has(String(tool.type))) return [];
    if (isObject(tool) && tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      const namespace = tool.name;
      return tool.tools.map((member: unknown, memberIndex) => {
        if (!isObject(member) || member.type !== 'function' || typeof member.name !== 'string') {
          throw invalidRequest(`Missing required parameter: 'tools[${index}].tools[${memberIndex}].name'.`, `tools[${index}].tools[${memberIndex}].name`, 'missing_required_parameter');
        }
        return { name: member.name, parameters: member.parameters, namespace };
      });
    }
    if (!isObject(tool) || tool.type !== 'function' || typeof tool.name !== 'string') {
      throw invalidRequest(`Missing required parameter: 'tools[${index}].name'.`, `tools[${index}].name`, 'missing_required_parameter');
    }
    return [{ name: tool.name, parameters: tool.parameters }];
  });
}

function toolChoiceOf(raw: unknown): ToolChoice {
  if (raw === 'none' || raw === 'auto' || raw === 'required') return raw;
  if (isObject(raw) && raw.type === 'function' && typeof raw.name === 'string') return { name: raw.name };
  return undefined;
}

/** The chat-form request the answer rules read. */
function chatRequestOf(body: JsonObject, messages: ChatMessage[]): ChatRequest {
  const tools = toolsOf(body);
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : { type: 'text' };
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  return {
    body: { tools: tools.map((tool) => ({ type: 'function', function: tool })) },
    model: body.model as string,
    messages,
    stream: body.stream === true,
    includeUsage: true,
    n: 1,
    maxTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined,
    stop: [],
    tools,
    toolChoice: toolChoiceOf(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls !== false,
    responseFormat: format.type === 'json_object' ? { type: 'json_object' } : format.type === 'json_schema' ? { type: 'json_schema', schema: format.schema } : { type: 'text' },
    reasoningEffort: typeof reasoning.effort === 'string' ? reasoning.effort : undefined,
  };
}

function validate(body: unknown, strict: boolean): JsonObject {
  if (!isObject(body)) throw invalidRequest('Invalid type for request body: expected an object.');
  if (strict) {
    const unknown = Object.keys(body).filter((key) => !KNOWN_RESPONSES_PARAMS.has(key));
    if (unknown.length > 0) throw invalidRequest(`Unknown parameter: '${unknown[0]}'.`, unknown[0], 'unknown_parameter');
  }
  if (typeof body.model !== 'string' || body.model === '') throw invalidRequest('Missing required parameter: \'model\'.', 'model', 'missing_required_parameter');
  if (body.model.startsWith('unknown-')) throw modelNotFoundError(body.model);
  if (body.stream !== undefined && typeof body.stream !== 'boolean') throw invalidRequest("Invalid type for 'stream': expected a boolean.", 'stream', 'invalid_type');
  if (body.max_output_tokens !== undefined && (!Number.isInteger(body.max_output_tokens) || (body.max_output_tokens as number) < 16)) {
    throw invalidRequest(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.`, 'max_output_tokens', 'integer_below_min_value');
  }
  if (isReasoningModel(body.model) && body.temperature !== undefined && body.temperature !== 1) {
    throw invalidRequest("Unsupported parameter: 'temperature' is not supported with this model.", 'temperature', 'unsupported_parameter');
  }
  return body;
}

/** The stored conversation `previous_response_id` continues (400 when there is no such response). */
function previousMessages(body: JsonObject, store: Map<string, StoredResponse>): ChatMessage[] {
  if (body.previous_response_id === undefined || body.previous_response_id === null) return [];
  const stored = typeof body.previous_response_id === 'string' ? store.get(body.previous_response_id) : undefined;
  if (stored === undefined) {
    throw new MockHttpError(400, errorBody(`Previous response with id '${String(body.previous_response_id)}' not found.`, 'invalid_request_error', 'previous_response_id', 'previous_response_not_found'));
  }
  return stored.messages;
}

/** Answers POST /v1/responses/input_tokens: the prompt tokens a response to this request would be billed for. */
export function answerInputTokens(raw: unknown, store: Map<string, StoredResponse>, options: { strict: boolean }): JsonObject {
  if (!isObject(raw)) throw invalidRequest('Invalid type for request body: expected an object.');
  if (options.strict) {
    const unknown = Object.keys(raw).filter((key) => !KNOWN_INPUT_TOKENS_PARAMS.has(key));
    if (unknown.length > 0) throw invalidRequest(`Unknown parameter: '${unknown[0]}'.`, unknown[0], 'unknown_parameter');
  }
  if (raw.model !== undefined && raw.model !== null && typeof raw.model !== 'string') throw invalidRequest("Invalid type for 'model': expected a string.", 'model', 'invalid_type');
  if (typeof raw.model === 'string' && raw.model.startsWith('unknown-')) throw modelNotFoundError(raw.model);
  const body: JsonObject = { ...raw, model: typeof raw.model === 'string' ? raw.model : 'gpt-4o' };
  const chat = chatRequestOf(body, toMessages(body, previousMessages(body, store)));
  return { object: 'response.input_tokens', input_tokens: countPromptTokens(chat) };
}

/** Answers POST /v1/responses; `store` holds the stored responses of this mock. */
export function answerResponses(raw: unknown, store: Map<string, StoredResponse>, options: { strict: boolean; usageOverride: UsageOverride | null }): ResponsesAnswer {
  const body = validate(raw, options.strict);
  const messages = toMessages(body, previousMessages(body, store));
  const chat = chatRequestOf(body, messages);
  const plan = planAnswer(chat);
  const usage = buildUsage(countPromptTokens(chat), plan, 1, 0, options.usageOverride);
  const id = randomId('resp_', 48);
  const createdAt = Math.floor(Date.now() / 1000);
  const output: JsonObject[] = [];
  const lastText = [...messages].reverse().find((message) => message.role === 'user');
  const searchText = typeof lastText?.content === 'string' ? lastText.content : '';
  const searches = plan.toolCalls.length === 0 ? hostedSearchItems(body, searchText) : [];
  if (searches.length > 0) {
    // OpenAI's hosted searches: their items, then the answer citing a source with a url_citation.
    const text = 'According to the release notes, the gateway now maps web search.';
    output.push(...searches);
    plan.text = text;
    output.push({ id: randomId('msg_', 48), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [{ type: 'url_citation', start_index: 0, end_index: text.length, url: 'https://example.com/unigate-release', title: 'Unigate release notes' }], logprobs: [] }] });
  } else {
    if (plan.reasoningTokens > 0) {
      const wantsEncrypted = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
      output.push({ id: randomId('rs_', 48), type: 'reasoning', summary: [], ...(wantsEncrypted ? { encrypted_content: encryptedReasoning() } : {}) });
    }
    if (plan.text !== null) {
      output.push({ id: randomId('msg_', 48), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: plan.text, annotations: [], logprobs: [] }] });
    }
  }
  for (const call of plan.toolCalls) {
    const namespace = chat.tools.find((tool) => tool.name === call.name)?.namespace;
    output.push({ id: randomId('fc_', 48), type: 'function_call', status: 'completed', call_id: call.id, ...(namespace === undefined ? {} : { namespace }), name: call.name, arguments: call.arguments });
  }
  const incomplete = plan.finishReason === 'length';
  const response: JsonObject = {
    id,
    object: 'response',
    created_at: createdAt,
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    completed_at: createdAt,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: `${chat.model}-2025-01-01`,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: chat.reasoningEffort ?? null, summary: null },
    service_tier: 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: usage.completion_tokens_details.reasoning_tokens },
      total_tokens: usage.total_tokens,
    },
    user: body.user ?? null,
  };
  if (body.store !== false) {
    const answer: ChatMessage = plan.toolCalls.length > 0
      ? { role: 'assistant', content: plan.text, tool_calls: plan.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
      : { role: 'assistant', content: plan.text };
    store.set(id, { response, messages: [...messages, answer] });
  }
  if (body.stream !== true) return { kind: 'json', body: response };
  return { kind: 'stream', events: streamEvents(response) };
}

/** The Responses event sequence for a finished response, text split into token deltas. */
function streamEvents(response: JsonObject): JsonObject[] {
  const events: JsonObject[] = [];
  const push = (event: JsonObject): void => {
    events.push({ ...event, sequence_number: events.length });
  };
  const inProgress = { ...response, status: 'in_progress', output: [], usage: null, completed_at: null, incomplete_details: null };
  push({ type: 'response.created', response: inProgress });
  push({ type: 'response.in_progress', response: inProgress });
  (response.output as JsonObject[]).forEach((item, outputIndex) => {
    const itemId = item.id as string;
    if (item.type === 'message') {
      const text = ((item.content as JsonObject[])[0]?.text as string | undefined) ?? '';
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
      push({ type: 'response.content_part.added', item_id: itemId, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      for (const delta of splitIntoTokens(text)) push({ type: 'response.output_text.delta', item_id: itemId, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
      push({ type: 'response.output_text.done', item_id: itemId, output_index: outputIndex, content_index: 0, text, logprobs: [] });
      push({ type: 'response.content_part.done', item_id: itemId, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text, annotations: [], logprobs: [] } });
    } else if (item.type === 'function_call') {
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of splitIntoTokens(item.arguments as string)) push({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: outputIndex, delta });
      push({ type: 'response.function_call_arguments.done', item_id: itemId, output_index: outputIndex, name: item.name, arguments: item.arguments });
    } else if (item.type === 'web_search_call') {
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } });
      for (const step of ['in_progress', 'searching', 'completed']) push({ type: `response.web_search_call.${step}`, item_id: itemId, output_index: outputIndex });
    } else if (item.type === 'file_search_call') {
      push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress' } });
      for (const step of ['in_progress', 'searching', 'completed']) push({ type: `response.file_search_call.${step}`, item_id: itemId, output_index: outputIndex });
    } else {
      push({ type: 'response.output_item.added', output_index: outputIndex, item });
    }
    push({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  push({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
  return events;
}
