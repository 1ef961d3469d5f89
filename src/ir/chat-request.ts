import type { Message } from './message.js';

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'tool'; name: string };

export type ResponseFormat = { kind: 'text' } | { kind: 'json' } | { kind: 'json-schema'; name?: string; schema: Record<string, unknown>; strict?: boolean };

/** A chat request in canonical form. Unmapped wire fields ride along in `extensions`, never silently lost. */
export interface ChatRequest {
  /** Public model id as the caller named it. */
  model: string;
  system: string[];
  messages: Message[];
  stream: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: { effort?: 'minimal' | 'low' | 'medium' | 'high'; budgetTokens?: number };
  /** Caller-supplied end-user id for abuse tracking. */
  user?: string;
  extensions: Record<string, unknown>;
}
