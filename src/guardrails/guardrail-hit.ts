/** What one policy did to one text: the summary entry the `x-gateway-guardrails` header and the usage row carry. */
import type { GuardrailMode, GuardrailPolicy } from './settings.js';

/** `unavailable`: an external guardrail gave no verdict (timeout, fault) and its policy let the text pass (fail open). */
export type GuardrailOutcome = 'passed' | 'logged' | 'masked' | 'blocked' | 'unavailable';

export interface GuardrailHit {
  name: string;
  kind: GuardrailPolicy['kind'];
  mode: GuardrailMode;
  outcome: GuardrailOutcome;
  /** detections in total, and by what was detected (`email`, `deny_list`, `prompt_size`, `tool_name`, `injection` …) */
  count: number;
  found: Record<string, number>;
}
