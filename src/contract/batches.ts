import { z } from 'zod';
import { isoTime } from './common.js';

export const consoleBatchStatus = z.enum(['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled']);

/** One batch of the account as the console's batches page shows it. */
export const consoleBatch = z.strictObject({
  id: z.string(),
  status: consoleBatchStatus,
  endpoint: z.string(),
  key_id: z.string(),
  /** The key's name; null when the key is gone. */
  key_name: z.string().nullable(),
  /** The key's project; null: the account's default project. */
  project_id: z.string().nullable(),
  total: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  /** What the lines settled so far were charged, in nano-dollars (a decimal integer string) and in dollars. */
  cost_nano: z.string().regex(/^\d+$/),
  cost_usd: z.number(),
  /** Why the input file was refused (a `failed` batch), one message per problem, at most a few. */
  errors: z.array(z.string()),
  has_output: z.boolean(),
  has_errors: z.boolean(),
  /** Whether the caller may cancel it and download its files (their role, and their project role where they have one). */
  can_manage: z.boolean(),
  created_at: isoTime,
  expires_at: isoTime,
  /** When it reached its final status; null while it runs. */
  ended_at: isoTime.nullable(),
});
export type ConsoleBatchJson = z.infer<typeof consoleBatch>;

/** GET /api/console/batches: newest first; `last_id` is the `after` of the next page. */
export const consoleBatchList = z.strictObject({ data: z.array(consoleBatch), has_more: z.boolean(), last_id: z.string().nullable() });
export type ConsoleBatchListJson = z.infer<typeof consoleBatchList>;

/** POST /api/console/batches/:id/cancel. */
export const consoleBatchAnswer = z.strictObject({ batch: consoleBatch });
export type ConsoleBatchAnswerJson = z.infer<typeof consoleBatchAnswer>;

/** GET /api/operator/admin/batches/queue: the batch queue over every instance. */
export const batchQueueFigures = z.strictObject({
  pending_lines: z.number().int(),
  running_lines: z.number().int(),
  in_progress_batches: z.number().int(),
  finished_last_minute: z.number().int(),
  finished_last_hour: z.number().int(),
});
export type BatchQueueFiguresJson = z.infer<typeof batchQueueFigures>;
