import { cancelBatch } from '../../batches/provider-batches/provider-batch-plan.js';
import type { Batch } from '../../domain/batches.js';
import type { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';

/** How one batch API (Anthropic's Message Batches, Gemini's batches) tells its own batches and names its errors. */
export interface BatchApi {
  /** The endpoint its batches are stored under; a batch of another API reads as absent. */
  endpoint: string;
  notFound(id: string): GatewayError;
  /** Deleting a batch that has not ended yet. */
  notEnded(id: string): GatewayError;
}

/** The account's batch of this API (another API's batch, or another account's, reads as absent). */
export async function ownBatch(services: GatewayServices, api: BatchApi, accountId: string, id: string): Promise<Batch> {
  const batch = await services.storage.batches.get(accountId, id);
  if (batch === null || batch.endpoint !== api.endpoint) throw api.notFound(id);
  return batch;
}

/** Cancels the account's batch of this API: lines not started are cancelled at once; the batch as it now stands. */
export async function cancelOwnBatch(services: GatewayServices, api: BatchApi, accountId: string, id: string): Promise<Batch> {
  await ownBatch(services, api, accountId, id);
  const batch = await cancelBatch(services, accountId, id);
  if (batch === null) throw api.notFound(id);
  return batch;
}

/** Removes the account's ended batch of this API with its results; one still running must be cancelled first. */
export async function deleteEndedBatch(services: GatewayServices, api: BatchApi, accountId: string, id: string): Promise<void> {
  await ownBatch(services, api, accountId, id);
  const outcome = await services.storage.batches.delete(accountId, id);
  if (outcome === 'absent') throw api.notFound(id);
  if (outcome === 'running') throw api.notEnded(id);
}
