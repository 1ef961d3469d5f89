import type { FinishReason } from './finish-reason.js';
import type { ContentPart } from './message.js';
import type { Usage } from './usage.js';

export interface ChatResponse {
  id: string;
  model: string;
  created: number;
  content: ContentPart[];
  finishReason: FinishReason;
  usage: Usage;
  warnings: string[];
}
