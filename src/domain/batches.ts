import type { NanoUsd } from './records.js';

export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** The endpoints an OpenAI batch's lines may call (those the gateway serves as JSON answers). */
export const OPENAI_BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/moderations'] as const;
/** The endpoint every line of an Anthropic Message Batch calls; a batch's endpoint also says which API made it. */
export const MESSAGE_BATCH_ENDPOINT = '/v1/messages';
/**
 * The endpoint every line of a Gemini batch (`models/{model}:batchGenerateContent`) calls: the route's template, its
 * model taken from each line's body (the batch's model, or the one the request names) when the line is run.
 */
export const GEMINI_BATCH_ENDPOINT = '/v1beta/models/{model}:generateContent';
/** Every endpoint a batch line may call: OpenAI's batch endpoints, Anthropic's Messages and Gemini's generateContent. */
export const BATCH_ENDPOINTS = [...OPENAI_BATCH_ENDPOINTS, MESSAGE_BATCH_ENDPOINT, GEMINI_BATCH_ENDPOINT] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];
/**
 * Every id a hold of the ledger is kept under that belongs to no gateway instance starts so (a batch's hold, kept
 * under `batch:<id>` for the batch's whole life); no instance id may.
 */
export const HOLDER_PREFIX = 'batch:';

/** The statuses of a batch whose lines are all settled and whose results are written. */
export const ENDED_BATCH_STATUSES = ['completed', 'failed', 'expired', 'cancelled'] as const;

/** A problem with one line of the input file (OpenAI's `errors.data[]`). */
export interface BatchInputError {
  code: string;
  message: string;
  line: number | null;
  param: string | null;
}

export interface BatchTokens {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

/** A batch job of an account, run by the gateway line by line from its durable queue. */
export interface Batch {
  id: string;
  accountId: string;
  keyId: string;
  endpoint: BatchEndpoint;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  outputFileId: string | null;
  errorFileId: string | null;
  errors: BatchInputError[] | null;
  /** How long the output and error files are kept (seconds); null: the default for batch output. */
  outputExpiresSeconds: number | null;
  total: number;
  completed: number;
  failed: number;
  /** What the lines settled so far were charged. */
  costNano: NanoUsd;
  tokens: BatchTokens;
  createdAt: number;
  expiresAt: number;
  inProgressAt: number | null;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
}

/** One line of an input file, as queued. */
export interface BatchLineInput {
  line: number;
  customId: string;
  /** The request body, JSON text. */
  body: string;
  /** Whether the line is in the part of its batch a provider's own batch API runs (the queue runs the others). */
  viaProvider?: boolean;
}

/** A line this instance holds the lease of. */
export interface ClaimedLine extends BatchLineInput {
  batchId: string;
  accountId: string;
  keyId: string;
  endpoint: BatchEndpoint;
  /** Runs of the line started so far, this one included. */
  attempts: number;
}

/** How a line ended: its answer (or error) and what it was charged. */
export interface LineOutcome {
  state: 'done' | 'failed';
  statusCode: number;
  requestId: string;
  /** The answer body (done) or error object (failed), JSON text. */
  result: string;
  costNano: NanoUsd;
  tokens: BatchTokens;
}

/** The queue as the operator sees it: its depth now and the lines finished lately (every instance together). */
export interface BatchQueueFigures {
  /** Lines of running batches not started yet. */
  pendingLines: number;
  /** Lines being run by some instance now. */
  runningLines: number;
  inProgressBatches: number;
  finishedLastMinute: number;
  finishedLastHour: number;
}

/** How a batch's lines stand, counted by state. */
export interface BatchLineCounts {
  /** Lines not settled yet (pending or running). */
  processing: number;
  done: number;
  failed: number;
  cancelled: number;
  expired: number;
}

/** Which page of an account's batches (newest first): after the batch `after`, or just before the batch `before`. */
export interface BatchListQuery {
  limit: number;
  after?: string;
  before?: string;
  /** Only batches of these endpoints (one API's batches); every batch when absent. */
  endpoints?: readonly BatchEndpoint[];
}

export interface FinishedLine {
  line: number;
  customId: string;
  state: 'done' | 'failed' | 'cancelled' | 'expired';
  statusCode: number | null;
  requestId: string | null;
  result: string | null;
}

export interface BatchRepository {
  /** The batch and its queued lines, in one transaction. */
  create(batch: Batch, lines: readonly BatchLineInput[]): Promise<void>;
  /** The account's batch (another account's id reads as absent). */
  get(accountId: string, batchId: string): Promise<Batch | null>;
  /** Newest first; one more than `limit` when more follow (beyond `after`, or before `before`). */
  list(accountId: string, query: BatchListQuery): Promise<Batch[]>;
  /** The line counts of each batch named, by state. */
  lineCounts(batchIds: readonly string[]): Promise<Map<string, BatchLineCounts>>;
  /** Removes an ended batch of the account and its lines; `running` when it has not ended, `absent` when no such batch. */
  delete(accountId: string, batchId: string): Promise<'deleted' | 'running' | 'absent'>;
  /** An in-progress batch becomes `cancelling` and its lines not started yet are cancelled; null when absent. */
  cancel(accountId: string, batchId: string, now: number): Promise<Batch | null>;
  /**
   * Leases up to `limit` lines for `owner` until `leaseUntil`: pending lines of in-progress batches, and running
   * lines whose lease ran out (their instance stopped). Each claim counts an attempt.
   */
  claimLines(owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedLine[]>;
  /** Extends the leases of every line `owner` is running to `leaseUntil` (it is still alive). */
  renewLeases(owner: string, leaseUntil: number): Promise<void>;
  /** Whether a usage row or a charge exists under the request id (the line ran before its instance stopped). */
  requestLogged(requestId: string): Promise<boolean>;
  /** Records the outcome and adds it to the batch's counts, only while `owner` holds the line's lease. */
  completeLine(batchId: string, line: number, owner: string, outcome: LineOutcome, now: number): Promise<boolean>;
  /**
   * Claims for `owner` one batch whose lines are all settled (or whose window ran out) and that no live instance is
   * finalizing: it becomes `finalizing` (a cancelled or expired one keeps its status until finished).
   */
  claimFinalize(owner: string, now: number, leaseUntil: number): Promise<Batch | null>;
  /**
   * The batch's lines in line order, with their outcomes (lines never run read as cancelled or expired): every one,
   * or a page of at most `page.limit` after line `page.afterLine`.
   */
  finishedLines(batchId: string, page?: { afterLine: number; limit: number }): Promise<FinishedLine[]>;
  /** The batch's end: its final status and result files, only while `owner` holds the finalize claim. */
  finish(batchId: string, owner: string, end: { status: 'completed' | 'cancelled' | 'expired' | 'failed'; at: number; outputFileId: string | null; errorFileId: string | null }): Promise<boolean>;
  /** The queue's depth and throughput at `now`. */
  queueFigures(now: number): Promise<BatchQueueFigures>;
}
