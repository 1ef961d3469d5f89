/** Canonical conversation content, independent of any wire protocol. */

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  /** Either inline data or a URL the upstream may fetch. */
  source: { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };
  detail?: 'auto' | 'low' | 'high';
}

export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Opaque provider signature that must travel back unchanged on the next turn (Anthropic, Gemini). */
  signature?: string;
  redacted?: boolean;
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
  toolName?: string;
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
}

export type ContentPart = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart;

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface Message {
  role: Role;
  content: ContentPart[];
}
