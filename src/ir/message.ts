/** Canonical conversation content, independent of any wire protocol. */

export type MediaSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string; mediaType?: string };

/** A web source an answer's text cites (Anthropic's web_search_result_location, Gemini's grounding, OpenAI's url_citation). */
export interface Citation {
  url: string;
  title?: string;
  /** The cited passage, where the upstream gives it. */
  citedText?: string;
  /** The cited span in the text part, in UTF-16 code units; absent: the whole part. */
  startIndex?: number;
  endIndex?: number;
}

export interface TextPart {
  type: 'text';
  text: string;
  /** Web sources this text is based on (answers of a hosted web search). */
  citations?: Citation[];
  /** Opaque provider signature that must travel back unchanged (Gemini's thoughtSignature on text parts). */
  signature?: string;
  /** Anthropic prompt-caching breakpoint on this block. */
  cacheControl?: { type: 'ephemeral'; ttl?: string };
}

export interface ImagePart {
  type: 'image';
  source: MediaSource;
  detail?: 'auto' | 'low' | 'high';
}

/** Documents and other files (PDF, audio) given inline or by URL. */
export interface FilePart {
  type: 'file';
  source: MediaSource;
  filename?: string;
}

export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Opaque provider signature that must travel back unchanged on the next turn (Anthropic, Gemini). */
  signature?: string;
  /** Anthropic `redacted_thinking`: `text` is empty and `redactedData` holds the encrypted block. */
  redactedData?: string;
}

export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  /** Arguments as the JSON text the model produced. */
  argumentsJson: string;
  /** Gemini's thoughtSignature, kept across turns. */
  signature?: string;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  /** Known from the matching tool call; Gemini's functionResponse needs it. */
  toolName: string;
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
}

/** A web search the upstream ran itself (a hosted tool) and the sources it found; only in answers. */
export interface WebSearchPart {
  type: 'web-search';
  id: string;
  query?: string;
  sources: Array<{ url: string; title?: string }>;
}

export type ContentPart = TextPart | ImagePart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart | WebSearchPart;

/**
 * `tool` messages carry only tool-result parts. The system prompt lives in ChatRequest.system; a `system` message
 * carries text parts only and is an instruction given at that point of the conversation (Anthropic's
 * mid-conversation system message): upstreams with a positional system message keep it in place, the others
 * append it to their system prompt.
 */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface Message {
  role: Role;
  content: ContentPart[];
}
