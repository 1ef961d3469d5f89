/**
 * Deterministic answers of the mock Anthropic upstream, for a validated request.
 *
 * Rules (documented for test authors):
 * - With thinking on: first a thinking block `Thinking about: <last user text>` signed by the mock (empty text with
 *   `display: 'omitted'`); when the last user text mentions "redact", a redacted_thinking block follows.
 * - Tool use: when tools are given, tool_choice is not `none`, the last user turn carries no tool results, and
 *   either tool_choice forces a tool (`any`/`tool`) or the last user text mentions "weather". Locations after
 *   "in"/"for"/"at" ("weather in Paris and Tokyo") give one tool_use each (one only with disable_parallel_tool_use);
 *   with `auto` a short text block comes first. Input is filled from the tool's schema.
 * - Otherwise text: after tool results `Tool <name> returned: <result text>`, else `Echo: <last user text>`
 *   (200 characters at most); with `output_config.format` a JSON object filled from the schema.
 * - Web search: with the web_search server tool and a last user text mentioning "search", a server_tool_use (the
 *   last 100 characters of that text as query), its web_search_tool_result with two results, and a text block
 *   citing the first (streamed with a citations_delta before its text). "<n> times" in the text runs n searches (at
 *   most the tool's max_uses), each a server_tool_use and its result; `usage.server_tool_use` counts them (in
 *   message_delta when streamed, as Anthropic reports it).
 * - Web fetch: with the web_fetch server tool and a last user text "fetch <url>", a server_tool_use of web_fetch, its
 *   web_fetch_tool_result (a text document) and a text block; counted as `web_fetch_requests`.
 * - Stop sequences cut the text (stop_reason stop_sequence); max_tokens cuts the output (stop_reason max_tokens).
 * - Tokens: about four characters each (estimateTokens); input counts system, messages and tools.
 */
import { createHash } from 'node:crypto';
import { requestedToolName } from './mock-tool-request.js';
import type { Block, JsonObject, MessagesRequest, Tool } from './mock-anthropic-upstream-validate.js';
import { estimateTokens, messageId, redactedThinkingData, signThinking, splitIntoTokens, toolUseId } from './mock-anthropic-upstream-wire.js';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: JsonObject }
  | { type: 'server_tool_use'; id: string; name: 'web_search'; input: { query: string } }
  | { type: 'server_tool_use'; id: string; name: 'web_fetch'; input: { url: string } }
  | { type: 'web_fetch_tool_result'; tool_use_id: string; content: { type: 'web_fetch_result'; url: string; content: JsonObject; retrieved_at: string } }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: Array<{ type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age: string }> }
  | { type: 'text'; text: string; citations: Array<{ type: 'web_search_result_location'; url: string; title: string; encrypted_index: string; cited_text: string }> };

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export interface AnswerPlan {
  content: ContentBlock[];
  stopReason: StopReason;
  stopSequence: string | null;
  outputTokens: number;
  thinkingTokens: number;
  /** Server-side web searches and web fetches run for the answer. */
  webSearches?: number;
  webFetches?: number;
}

export interface MockUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  service_tier: 'standard';
  output_tokens_details?: { thinking_tokens: number };
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

export const MOCK_SEARCH_RESULTS = [
  { url: 'https://example.com/unigate-release', title: 'Unigate release notes' },
  { url: 'https://example.org/gateway-guide', title: 'A guide to model gateways' },
];

const serverToolUseId = (seed: string): string => `srvtoolu_01${createHash('sha1').update(seed).digest('hex').slice(0, 20)}`;

/** `searches` searches (the later ones refine the query), each with its results, then the text citing the first. */
function webSearchBlocks(query: string, searches: number): ContentBlock[] {
  const text = 'According to the release notes, the gateway now maps web search.';
  const blocks: ContentBlock[] = [];
  for (let index = 0; index < searches; index++) {
    const asked = index === 0 ? query : `${query} (refined ${index})`;
    const id = serverToolUseId(asked);
    blocks.push({ type: 'server_tool_use', id, name: 'web_search', input: { query: asked } }, {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: MOCK_SEARCH_RESULTS.map((result) => ({ type: 'web_search_result', ...result, encrypted_content: `enc_${Buffer.from(result.url).toString('base64')}`, page_age: 'November 1, 2026' })),
    });
  }
  blocks.push({ type: 'text', text, citations: [{ type: 'web_search_result_location', url: MOCK_SEARCH_RESULTS[0]!.url, title: MOCK_SEARCH_RESULTS[0]!.title, encrypted_index: 'Eo8BCioIAhgBIiQ', cited_text: 'The gateway now maps web search.' }] });
  return blocks;
}

function webFetchBlocks(url: string): ContentBlock[] {
  const id = serverToolUseId(url);
  return [
    { type: 'server_tool_use', id, name: 'web_fetch', input: { url } },
    {
      type: 'web_fetch_tool_result',
      tool_use_id: id,
      content: { type: 'web_fetch_result', url, content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Unigate release notes: the gateway bills web searches.' }, title: 'Unigate release notes' }, retrieved_at: '2026-11-01T00:00:00Z' },
    },
    { type: 'text', text: 'The page says the gateway bills web searches.' },
  ];
}

/** How many searches the text asks for ("<n> times"), at most the tool's max_uses. */
function searchesAsked(text: string, maxUses: number | null): number {
  const asked = Number(/\b(\d+) times\b/i.exec(text)?.[1] ?? 1);
  return Math.max(1, Math.min(asked, maxUses ?? asked));
}

const MAX_ECHO_CHARS = 200;

function blockTokens(block: Block): number {
  switch (block.type) {
    case 'text':
      return estimateTokens(block.text);
    case 'image':
      return 85;
    case 'document':
      return 100;
    case 'tool_use':
      return estimateTokens(block.name + JSON.stringify(block.input));
    case 'tool_result':
      return 3 + estimateTokens(block.text);
    case 'thinking':
      return estimateTokens(block.thinking);
    case 'redacted_thinking':
      return 16;
  }
}

function toolTokens(tool: Tool): number {
  return estimateTokens(tool.name + tool.description + JSON.stringify(tool.schema));
}

/**
 * Input tokens, and those of the prefix up to the last cache_control breakpoint (tools → system → messages),
 * which is what Anthropic caches.
 */
export function countInput(request: MessagesRequest): { total: number; cachePrefix: number; cacheKey: string } {
  let total = 3;
  let cachePrefix = 0;
  const hash = createHash('sha1').update(request.model);
  let cacheKey = '';
  const breakpoint = (): void => {
    cachePrefix = total;
    cacheKey = hash.copy().digest('hex');
  };
  for (const tool of request.tools) {
    total += toolTokens(tool);
    hash.update(JSON.stringify(tool));
    if (tool.cacheControl) breakpoint();
  }
  for (const part of request.system) {
    total += estimateTokens(part.text);
    hash.update(part.text);
    if (part.cacheControl) breakpoint();
  }
  for (const message of request.systemMessages) total += 4 + estimateTokens(message.text);
  for (const turn of request.turns) {
    total += 4;
    hash.update(turn.role);
    for (const block of turn.blocks) {
      total += blockTokens(block);
      hash.update(JSON.stringify(block));
      if ('cacheControl' in block && block.cacheControl) breakpoint();
    }
  }
  return { total, cachePrefix, cacheKey };
}

function lastUserTurnText(request: MessagesRequest): string {
  for (let index = request.turns.length - 1; index >= 0; index--) {
    const turn = request.turns[index]!;
    if (turn.role !== 'user') continue;
    const texts = turn.blocks.flatMap((block) => (block.type === 'text' ? [block.text] : []));
    if (texts.length > 0) return texts.join(' ');
  }
  return '';
}

function valueFor(name: string, schema: unknown, location: string): unknown {
  const property = (schema ?? {}) as JsonObject;
  if (Array.isArray(property.enum) && property.enum.length > 0) return property.enum[0];
  switch (property.type) {
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return name === 'location' || name === 'city' ? location : `mock ${name}`;
  }
}

/** Tool input from the schema: required properties (or all, when none are required). */
function toolInput(tool: Tool, location: string): JsonObject {
  const properties = (tool.schema.properties ?? {}) as JsonObject;
  const required = Array.isArray(tool.schema.required) ? (tool.schema.required as string[]) : Object.keys(properties);
  const input: JsonObject = {};
  for (const name of required) input[name] = valueFor(name, properties[name], location);
  return input;
}

function locations(text: string): string[] {
  const match = /\b(?:in|for|at)\s+(.+?)(?:[?.!]|$)/i.exec(text);
  if (match === null) return ['Paris'];
  return match[1]!.split(/\s*(?:,|\band\b)\s*/i).map((place) => place.trim()).filter((place) => place !== '');
}

function jsonAnswer(schema: JsonObject, echo: string): string {
  const properties = (schema.properties ?? {}) as JsonObject;
  const answer: JsonObject = {};
  for (const [name, property] of Object.entries(properties)) answer[name] = valueFor(name, property, echo);
  if (Object.keys(properties).length === 0) answer.echo = echo;
  return JSON.stringify(answer);
}

function toolResultAnswer(request: MessagesRequest): string | null {
  const last = request.turns.at(-1);
  if (last?.role !== 'user') return null;
  const results = last.blocks.flatMap((block) => (block.type === 'tool_result' ? [block] : []));
  if (results.length === 0) return null;
  const previous = request.turns.at(-2);
  return results
    .map((result) => {
      const use = previous?.blocks.find((block) => block.type === 'tool_use' && block.id === result.toolUseId);
      const name = use?.type === 'tool_use' ? use.name : 'tool';
      return `Tool ${name} returned: ${result.text}`;
    })
    .join('\n');
}

export function planAnswer(request: MessagesRequest): AnswerPlan {
  const userText = lastUserTurnText(request);
  const content: ContentBlock[] = [];
  let thinkingTokens = 0;
  if (request.thinking !== null) {
    const thinking = request.thinking.omitted ? '' : `Thinking about: ${userText.slice(0, MAX_ECHO_CHARS)}`;
    content.push({ type: 'thinking', thinking, signature: signThinking(thinking) });
    thinkingTokens += Math.max(1, estimateTokens(thinking));
    if (/redact/i.test(userText)) {
      content.push({ type: 'redacted_thinking', data: redactedThinkingData(userText) });
      thinkingTokens += 16;
    }
  }
  const afterTools = toolResultAnswer(request);
  const choice = request.toolChoice;
  const forced = choice?.type === 'any' || choice?.type === 'tool';
  const named = afterTools === null ? requestedToolName(userText, request.tools.map((t) => t.name)) : undefined;
  const wantsTool = request.tools.length > 0 && choice?.type !== 'none' && afterTools === null && (forced || named !== undefined || /weather/i.test(userText));
  let budget = request.maxTokens - thinkingTokens;
  const fetchUrl = /\bfetch (https?:\/\/\S+)/i.exec(userText)?.[1];
  if (request.webFetch !== null && afterTools === null && fetchUrl !== undefined) {
    content.push(...webFetchBlocks(fetchUrl));
    return { content, stopReason: 'end_turn', stopSequence: null, outputTokens: thinkingTokens + 20, thinkingTokens, webSearches: 0, webFetches: 1 };
  }
  if (request.webSearch !== null && afterTools === null && /search/i.test(userText)) {
    const searches = searchesAsked(userText, request.webSearch.maxUses);
    content.push(...webSearchBlocks(userText.slice(-100).trim(), searches));
    return { content, stopReason: 'end_turn', stopSequence: null, outputTokens: thinkingTokens + 12 + 12 * searches, thinkingTokens, webSearches: searches, webFetches: 0 };
  }
  if (wantsTool) {
    const tool = (choice?.type === 'tool' ? request.tools.find((t) => t.name === choice.name) : undefined) ??
      request.tools.find((t) => t.name === named) ??
      request.tools.find((t) => /weather/i.test(t.name)) ?? request.tools[0]!;
    if (!forced) content.push({ type: 'text', text: 'Let me check that for you.' });
    const places = choice?.disableParallel === true || named !== undefined ? locations(userText).slice(0, 1) : locations(userText);
    for (const place of places) content.push({ type: 'tool_use', id: toolUseId(), name: tool.name, input: toolInput(tool, place) });
    const outputTokens = thinkingTokens + content.reduce((sum, block) => sum + (block.type === 'text' ? splitIntoTokens(block.text).length : block.type === 'tool_use' ? estimateTokens(JSON.stringify(block.input)) + 5 : 0), 0);
    return { content, stopReason: 'tool_use', stopSequence: null, outputTokens, thinkingTokens };
  }
  let text = afterTools ?? (request.jsonSchema !== null ? jsonAnswer(request.jsonSchema, userText) : `Echo: ${userText.slice(0, MAX_ECHO_CHARS)}`);
  let stopReason: StopReason = 'end_turn';
  let stopSequence: string | null = null;
  for (const stop of request.stopSequences) {
    const at = text.indexOf(stop);
    if (at >= 0) {
      text = text.slice(0, at);
      stopReason = 'stop_sequence';
      stopSequence = stop;
    }
  }
  let pieces = splitIntoTokens(text);
  budget = Math.max(0, budget);
  if (pieces.length > budget) {
    pieces = pieces.slice(0, budget);
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  if (pieces.length > 0) content.push({ type: 'text', text: pieces.join('') });
  return { content, stopReason, stopSequence, outputTokens: thinkingTokens + pieces.length, thinkingTokens };
}

export function buildUsage(input: { noCache: number; cacheRead: number; cacheWrite: number }, plan: AnswerPlan): MockUsage {
  const usage: MockUsage = {
    input_tokens: input.noCache,
    cache_creation_input_tokens: input.cacheWrite,
    cache_read_input_tokens: input.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: input.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: plan.outputTokens,
    service_tier: 'standard',
  };
  if (plan.thinkingTokens > 0) usage.output_tokens_details = { thinking_tokens: plan.thinkingTokens };
  if (plan.webSearches !== undefined || plan.webFetches !== undefined) usage.server_tool_use = { web_search_requests: plan.webSearches ?? 0, web_fetch_requests: plan.webFetches ?? 0 };
  return usage;
}

export function buildMessage(request: MessagesRequest, plan: AnswerPlan, usage: MockUsage): JsonObject {
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: plan.content,
    stop_reason: plan.stopReason,
    stop_sequence: plan.stopSequence,
    usage,
  };
}

export interface StreamEvent {
  event: string;
  data: JsonObject;
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}

/** The real event sequence: message_start, ping after the first block start, blocks, message_delta, message_stop. */
export function buildStreamEvents(message: JsonObject, plan: AnswerPlan, usage: MockUsage): StreamEvent[] {
  const events: StreamEvent[] = [];
  const startUsage = { ...usage, output_tokens: 1 };
  delete startUsage.output_tokens_details;
  // Server tools run while the message streams: their count comes with message_delta.
  delete startUsage.server_tool_use;
  events.push({ event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } } });
  plan.content.forEach((block, index) => {
    const start = (contentBlock: JsonObject): void => {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: contentBlock } });
      if (index === 0) events.push({ event: 'ping', data: { type: 'ping' } });
    };
    const delta = (value: JsonObject): void => {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: value } });
    };
    switch (block.type) {
      case 'text': {
        start('citations' in block ? { type: 'text', text: '', citations: [] } : { type: 'text', text: '' });
        if ('citations' in block) for (const citation of block.citations) delta({ type: 'citations_delta', citation });
        const pieces = splitIntoTokens(block.text);
        for (let at = 0; at < pieces.length; at += 3) delta({ type: 'text_delta', text: pieces.slice(at, at + 3).join('') });
        break;
      }
      case 'thinking':
        start({ type: 'thinking', thinking: '', signature: '' });
        for (const piece of chunks(block.thinking, 24)) delta({ type: 'thinking_delta', thinking: piece });
        delta({ type: 'signature_delta', signature: block.signature });
        break;
      case 'redacted_thinking':
        start({ type: 'redacted_thinking', data: block.data });
        break;
      case 'server_tool_use':
        start({ type: 'server_tool_use', id: block.id, name: block.name, input: {} });
        delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) });
        break;
      case 'web_search_tool_result':
      case 'web_fetch_tool_result':
        start(block);
        break;
      case 'tool_use':
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
        delta({ type: 'input_json_delta', partial_json: '' });
        for (const piece of chunks(JSON.stringify(block.input), 12)) delta({ type: 'input_json_delta', partial_json: piece });
        break;
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  const deltaUsage: JsonObject = {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
  };
  if (usage.output_tokens_details !== undefined) deltaUsage.output_tokens_details = usage.output_tokens_details;
  if (usage.server_tool_use !== undefined) deltaUsage.server_tool_use = usage.server_tool_use;
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: plan.stopReason, stop_sequence: plan.stopSequence }, usage: deltaUsage } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}
