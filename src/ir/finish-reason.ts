/** The unified finish reason plus the upstream's raw value, which is never lost. */
export type UnifiedFinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

export interface FinishReason {
  unified: UnifiedFinishReason;
  raw: string | null;
}
