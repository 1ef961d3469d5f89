/** Which provider batch API runs a batch: OpenAI's Batch API or Anthropic's Message Batches. */
export type BatchProvider = 'openai' | 'anthropic';

/**
 * Where a provider batch stands: `submit` (its input is being sent upstream), `running` (polled until the upstream
 * batch ends), `collect` (its results are being charged and recorded line by line), `done`, or `fallback` (the
 * upstream refused it: the gateway's own queue runs its lines).
 */
export type ProviderBatchState = 'submit' | 'running' | 'collect' | 'done' | 'fallback';
export const PROVIDER_BATCH_STATES = ['submit', 'running', 'collect', 'done', 'fallback'] as const satisfies readonly ProviderBatchState[];

export interface ProviderBatch {
  batchId: string;
  channelId: string;
  provider: BatchProvider;
  state: ProviderBatchState;
  upstreamFileId: string | null;
  upstreamBatchId: string | null;
  /** The upstream batch's last status seen. */
  upstreamStatus: string | null;
  /** Whether the caller's cancel was passed on upstream. */
  cancelSent: boolean;
  /** When it is next looked at (epoch ms). */
  nextAt: number;
  error: string | null;
}

export interface ProviderBatchRepository {
  create(batch: ProviderBatch): Promise<void>;
  get(batchId: string): Promise<ProviderBatch | null>;
  /** Leases for `owner` until `leaseUntil` one batch due at `now` (submit, running or collect) whose lease is free. */
  claimDue(owner: string, now: number, leaseUntil: number): Promise<ProviderBatch | null>;
  /** Records progress while `owner` holds the lease, and lets it go. */
  update(batchId: string, owner: string, change: Partial<Pick<ProviderBatch, 'state' | 'upstreamFileId' | 'upstreamBatchId' | 'upstreamStatus' | 'cancelSent' | 'nextAt' | 'error'>>): Promise<boolean>;
  /** The batch becomes `cancelling` with its lines left as they are: the provider's answers to lines it ran still come. */
  cancel(accountId: string, batchId: string, now: number): Promise<boolean>;
  /** Takes a pending line of the batch for `owner` (to record the provider's answer to it); false when it is not pending. */
  takeLine(batchId: string, line: number, owner: string, now: number, leaseUntil: number): Promise<boolean>;
  /** The gateway batch's owner, endpoint and status (null when it is gone). */
  batchOf(batchId: string): Promise<{ accountId: string; keyId: string; endpoint: string; status: string } | null>;
  /** The batch's lines not settled yet (pending or running), with their requests. */
  openLines(batchId: string): Promise<Array<{ line: number; customId: string; body: string }>>;
  /** Lines still pending: each becomes `state` (the upstream batch ended without answering them). */
  closePendingLines(batchId: string, state: 'cancelled' | 'expired' | 'failed', result: string | null, now: number): Promise<number>;
}

/** Where a provider's batch API is reached for one channel: its base URL (or the provider's own), keys and headers. */
export interface BatchApiTarget {
  baseUrl: string | null;
  apiKey: string;
  headers: Record<string, string>;
}

/** One request of a batch as the provider gets it: the caller's `custom_id` and the body with the upstream's model name. */
export interface ProviderBatchRequest {
  customId: string;
  body: Record<string, unknown>;
}

/** How an upstream batch stands: still running, or ended (how) and its answers. */
export type UpstreamBatchState =
  | { ended: false; status: string }
  | { ended: true; status: string; how: 'completed' | 'cancelled' | 'expired' | 'failed' };

/** The provider's answer to one request: its HTTP status and body (an answer, or the provider's error object). */
export interface ProviderBatchAnswer {
  customId: string;
  status: number;
  body: unknown;
}

/**
 * A provider's own batch API, as the batch pass-through uses it. `submit` answers the upstream batch's id (and input
 * file id, for APIs that take one); a refusal of the batch itself (4xx) throws `ProviderBatchRefused` so the gateway's
 * queue runs it instead; other failures throw and are retried.
 */
export interface ProviderBatchApi {
  submit(target: BatchApiTarget, endpoint: string, requests: readonly ProviderBatchRequest[], label: string): Promise<{ batchId: string; fileId: string | null }>;
  poll(target: BatchApiTarget, batchId: string): Promise<UpstreamBatchState>;
  cancel(target: BatchApiTarget, batchId: string): Promise<void>;
  /** Every answer the ended batch holds (requests it never ran are absent). */
  answers(target: BatchApiTarget, batchId: string): Promise<ProviderBatchAnswer[]>;
}

/** The provider refused the batch itself (a 4xx to its creation): the gateway's own queue runs it instead. */
export class ProviderBatchRefused extends Error {
  override name = 'ProviderBatchRefused';
}
