import type { Message, TextPart } from './message.js';

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/**
 * A tool the upstream runs itself. Web search maps between OpenAI's web_search, Anthropic's server-side web search
 * tool and Gemini's Google Search grounding.
 */
export interface WebSearchTool {
  kind: 'web-search';
  maxUses?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
  userLocation?: { city?: string; region?: string; country?: string; timezone?: string };
}

export type HostedTool = WebSearchTool;

export type ToolChoice = { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'tool'; name: string };

export type ResponseFormat =
  | { kind: 'text' }
  | { kind: 'json' }
  | { kind: 'json-schema'; name?: string; description?: string; schema: Record<string, unknown>; strict?: boolean };

export interface ReasoningOptions {
  effort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Token budget for thinking (Anthropic budget_tokens, Gemini thinkingBudget). */
  budgetTokens?: number;
  /** Ask the upstream to return its reasoning text where it can (Gemini includeThoughts). */
  includeThoughts?: boolean;
}

/**
 * A chat request in canonical form. Decoders fill what their protocol says; encoders map what their upstream
 * takes and add a line to `warnings` for anything they must drop, so nothing is lost silently.
 */
export interface ChatRequest {
  /** Public model id as the caller named it. */
  model: string;
  system: TextPart[];
  messages: Message[];
  stream: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  tools?: ToolDefinition[];
  /** Tools the upstream runs itself (mapped where the target family has an equivalent). */
  hostedTools?: HostedTool[];
  /**
   * Hosted tools left out because the target has no equivalent or the operator switched the mapping off, by the
   * caller's name for them (e.g. `web_search`); named in a response header and in the usage row.
   */
  droppedHostedTools?: string[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningOptions;
  /** Caller-supplied end-user id for abuse tracking. */
  user?: string;
  /** Wire fields the decoder did not map, by name; never forwarded across protocols, reported in warnings. */
  extensions: Record<string, unknown>;
  /** Things dropped or changed in translation, for the caller (response header) and the logs. */
  warnings: string[];
}
