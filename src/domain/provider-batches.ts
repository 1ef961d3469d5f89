import type { Channel } from './records.js';

/** Which provider batch API runs a batch: OpenAI's Batch API, Anthropic's Message Batches or Gemini's batch mode. */
export type BatchProvider = 'openai' | 'anthropic' | 'gemini';
export const BATCH_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const satisfies readonly BatchProvider[];

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
  /**
   * When a submit to the provider was first begun (epoch ms), recorded before the provider is called: a batch in
   * `submit` with this set may exist upstream already (the instance stopped before recording its id), so the
   * provider is searched for it before anything is submitted again.
   */
  submitStartedAt: number | null;
}

export interface ProviderBatchRepository {
  create(batch: ProviderBatch): Promise<void>;
  get(batchId: string): Promise<ProviderBatch | null>;
  /** Leases for `owner` until `leaseUntil` one batch due at `now` (submit, running or collect) whose lease is free. */
  claimDue(owner: string, now: number, leaseUntil: number): Promise<ProviderBatch | null>;
  /** Records that `owner` (holding the lease) is about to submit the batch upstream; the lease is kept. */
  markSubmitting(batchId: string, owner: string, at: number): Promise<boolean>;
  /** Whether another gateway batch already runs as this upstream batch of the channel. */
  upstreamTaken(channelId: string, upstreamBatchId: string, exceptBatchId: string): Promise<boolean>;
  /** Records progress while `owner` holds the lease, and lets it go. */
  update(batchId: string, owner: string, change: Partial<Pick<ProviderBatch, 'state' | 'upstreamFileId' | 'upstreamBatchId' | 'upstreamStatus' | 'cancelSent' | 'nextAt' | 'error'>>): Promise<boolean>;
  /**
   * The batch becomes `cancelling` with the provider's part of its lines left as they are (the provider's answers to
   * lines it ran still come); the pending lines of the queue's part are cancelled.
   */
  cancel(accountId: string, batchId: string, now: number): Promise<boolean>;
  /** Takes a pending line of the batch's provider part for `owner` (to record the provider's answer to it); false when it is not pending. */
  takeLine(batchId: string, line: number, owner: string, now: number, leaseUntil: number): Promise<boolean>;
  /** The gateway batch's owner, endpoint and status (null when it is gone). */
  batchOf(batchId: string): Promise<{ accountId: string; keyId: string; endpoint: string; status: string } | null>;
  /** The lines of the batch's provider part not settled yet (pending or running), with their requests. */
  openLines(batchId: string): Promise<Array<{ line: number; customId: string; body: string }>>;
  /** Lines of the provider part still open: each becomes `state` (the upstream batch ended without answering them). */
  closePendingLines(batchId: string, state: 'cancelled' | 'expired' | 'failed', result: string | null, now: number): Promise<number>;
}

/** Where a provider's batch API is reached for one channel: its base URL (or the provider's own), keys and headers. */
export interface BatchApiTarget {
  baseUrl: string | null;
  apiKey: string;
  headers: Record<string, string>;
}

/**
 * One request of a batch as the provider gets it: `customId` (the caller's `custom_id` for OpenAI; a key made from the
 * line number where the caller's id may not suit the provider) and the body with the upstream's model name.
 */
export interface ProviderBatchRequest {
  customId: string;
  body: Record<string, unknown>;
}

/** What identifies a batch submitted before a crash: its label (the gateway batch id), when the submit began, its size. */
export interface ProviderBatchSearch {
  label: string;
  since: number;
  count: number;
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
 * How a batch's lines written in one family reach a provider's batch API of another, and its answers come back: the
 * request in the provider's own shape (throws when the line cannot be expressed there: the batch then runs on the
 * gateway's queue), and the provider's answer in the shape of the endpoint the caller's lines called.
 */
export interface LineTranslation {
  toProvider(body: Record<string, unknown>, channel: Channel, upstreamModel: string): Record<string, unknown>;
  fromProvider(answer: ProviderBatchAnswer, model: string): ProviderBatchAnswer;
}

/**
 * A provider's own batch API, as the batch pass-through uses it. `submit` answers the upstream batch's id (and input
 * file id, for APIs that take one); a refusal of the batch itself (4xx) throws `ProviderBatchRefused` so the gateway's
 * queue runs it instead; other failures throw and are retried.
 */
export interface ProviderBatchApi {
  /** Lines of these endpoints (another family's) go translated; the API's own endpoints go as they are. */
  translations?: Readonly<Record<string, LineTranslation>>;
  /** The id the provider gets for a line of the gateway batch `batchId` (answers are matched back by it). */
  requestKey(batchId: string, line: { line: number; customId: string }): string;
  /**
   * The provider's batches that may be the one submitted for `search` before the instance stopped, best match first
   * (by the label where the provider keeps one, else by time and size): the runner takes the first no other gateway
   * batch runs as, and submits only when there is none.
   */
  find(target: BatchApiTarget, search: ProviderBatchSearch): Promise<string[]>;
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
