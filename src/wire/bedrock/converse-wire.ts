/** The Bedrock Converse API shapes this adapter writes (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). */

export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type ConverseDocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

export type ConverseToolResultContent = { text: string } | { json: unknown } | { image: { format: ConverseImageFormat; source: { bytes: string } } };

export type ConverseContentBlock =
  | { text: string }
  | { image: { format: ConverseImageFormat; source: { bytes: string } } }
  | { document: { format: ConverseDocumentFormat; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string } }
  | { cachePoint: { type: 'default' } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseContentBlock[];
}

export type ConverseSystemBlock = { text: string } | { cachePoint: { type: 'default' } };

export interface ConverseTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseRequestBody {
  messages: ConverseMessage[];
  system?: ConverseSystemBlock[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: ConverseTool[]; toolChoice?: ConverseToolChoice };
  additionalModelRequestFields?: Record<string, unknown>;
  guardrailConfig?: { guardrailIdentifier: string; guardrailVersion: string; trace?: 'enabled' | 'disabled' };
}
