import type { BatchQueueFiguresJson } from '../../contract/batches.js';
import type { GatewayServices } from '../../services.js';
import { sendJson } from '../respond.js';
import { adminRoutes } from './admin-route.js';

/** /admin/batches/queue: the batch queue's depth and throughput over every instance (docs/operators.md, "Files and batches"). */
export const BATCH_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => ({ storage: services.storage, clock: services.clock }), [
  { method: 'GET', path: '/admin/batches/queue', handler: ({ storage, clock }) => async (context) => {
    const figures = await storage.batches.queueFigures(clock.now());
    sendJson(context, 200, {
      pending_lines: figures.pendingLines,
      running_lines: figures.runningLines,
      in_progress_batches: figures.inProgressBatches,
      finished_last_minute: figures.finishedLastMinute,
      finished_last_hour: figures.finishedLastHour,
    } satisfies BatchQueueFiguresJson);
  } },
]);
