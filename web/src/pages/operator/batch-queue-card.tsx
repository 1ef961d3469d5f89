import { errorMessage } from '../../api/client';
import type { BatchQueueFigures } from '../../api/types';
import { formatInteger } from '../../format/format';
import { Alert, Card, Loading } from '../../ui/feedback';
import { useOperatorGet } from './operator-queries';

const REFRESH_MS = 15_000;

/** The batch queue over every instance (the admin API's /admin/batches/queue): how much waits and how fast it drains. */
export function BatchQueueCard() {
  const queue = useOperatorGet<BatchQueueFigures>('admin/batches/queue', undefined, { refreshMs: REFRESH_MS });
  const data = queue.data;
  return (
    <Card title="Batch queue">
      {queue.isPending ? <Loading /> : null}
      {queue.isError ? <Alert tone="error">{errorMessage(queue.error)}</Alert> : null}
      {data === undefined ? null : (
        <dl className="stat-strip" data-testid="batch-queue">
          <div className="stat"><dt>Lines waiting</dt><dd data-testid="batch-queue-pending">{formatInteger(data.pending_lines)}<span className="stat-note">in {formatInteger(data.in_progress_batches)} running batches</span></dd></div>
          <div className="stat"><dt>Lines running</dt><dd>{formatInteger(data.running_lines)}<span className="stat-note">on every instance</span></dd></div>
          <div className="stat"><dt>Finished, last minute</dt><dd data-testid="batch-queue-minute">{formatInteger(data.finished_last_minute)}<span className="stat-note">lines</span></dd></div>
          <div className="stat"><dt>Finished, last hour</dt><dd>{formatInteger(data.finished_last_hour)}<span className="stat-note">lines</span></dd></div>
        </dl>
      )}
    </Card>
  );
}
