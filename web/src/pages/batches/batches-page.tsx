import { useState } from 'react';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { ConsoleBatch, ConsoleBatchList } from '../../api/types';
import { useDisplayCurrency } from '../../format/display-currency';
import { formatDateTime, formatInteger } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';

const batchesKey = ['batches'] as const;
/** While a batch runs, its progress is read again this often. */
const REFRESH_MS = 5_000;

type Tone = 'neutral' | 'success' | 'warning' | 'danger' | 'info';
const STATUS: Record<ConsoleBatch['status'], { label: string; tone: Tone }> = {
  validating: { label: 'Validating', tone: 'info' },
  in_progress: { label: 'Running', tone: 'info' },
  finalizing: { label: 'Finishing', tone: 'info' },
  cancelling: { label: 'Cancelling', tone: 'warning' },
  completed: { label: 'Completed', tone: 'success' },
  failed: { label: 'Failed', tone: 'danger' },
  expired: { label: 'Expired', tone: 'warning' },
  cancelled: { label: 'Cancelled', tone: 'neutral' },
};
const RUNNING = new Set<ConsoleBatch['status']>(['validating', 'in_progress', 'finalizing', 'cancelling']);
const CANCELLABLE = new Set<ConsoleBatch['status']>(['validating', 'in_progress']);

function useBatches() {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: batchesKey,
    queryFn: ({ pageParam }) => api.get<ConsoleBatchList>('/api/console/batches', { after: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => (last.has_more && last.last_id !== null ? last.last_id : undefined),
    refetchInterval: (query) => (query.state.data?.pages.some((page) => page.data.some((batch) => RUNNING.has(batch.status))) === true ? REFRESH_MS : false),
  });
}

function useCancelBatch() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.post<{ batch: ConsoleBatch }>(`/api/console/batches/${encodeURIComponent(id)}/cancel`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: batchesKey }),
  });
}

function Progress({ batch }: { batch: ConsoleBatch }) {
  const settled = batch.completed + batch.failed;
  // Lines of a batch that ended before running them (cancelled or out of time) are not counted as done or failed.
  const notRun = batch.ended_at === null ? 0 : batch.total - settled;
  return (
    <div className="batch-progress" data-testid="batch-progress">
      <progress max={Math.max(batch.total, 1)} value={settled} aria-label={`${settled} of ${batch.total} lines settled`} />
      <span className="key-meta">
        {formatInteger(batch.completed)} done · {formatInteger(batch.failed)} failed · {formatInteger(batch.total)} lines
        {notRun > 0 ? <> · {formatInteger(notRun)} not run</> : null}
      </span>
    </div>
  );
}

/** The account's batch jobs (`/v1/batches`): progress, cost so far, and for those allowed, cancel and the result files. */
export function BatchesPage() {
  useDocumentTitle('Batches');
  const display = useDisplayCurrency();
  const batches = useBatches();
  const cancel = useCancelBatch();
  const [cancelling, setCancelling] = useState<ConsoleBatch | null>(null);
  const rows = batches.data?.pages.flatMap((page) => page.data) ?? [];

  return (
    <div className="page stack">
      <PageHeader
        title="Batches"
        description={<>Bulk jobs sent with the Batch API (<code>POST /v1/batches</code>): run in the background at batch prices, each line charged as it completes.</>}
      />
      {batches.error != null ? <Alert tone="error">{errorMessage(batches.error)}</Alert> : null}
      {cancel.isError && cancelling === null ? <Alert tone="error">{errorMessage(cancel.error)}</Alert> : null}
      {batches.isPending ? <Loading /> : null}
      {batches.data === undefined ? null : (
        <Card>
          {rows.length === 0 ? (
            <div className="empty" data-testid="batches-empty">
              <p>No batches yet.</p>
              <p>Upload a JSONL file with <code>purpose=batch</code> to <code>/v1/files</code>, then create a batch from it with <code>/v1/batches</code> (the OpenAI SDK’s <code>files.create</code> and <code>batches.create</code> work as they are). Its progress and cost show here.</p>
            </div>
          ) : (
            <div className="table-scroll">
              <table className="table table-cards batches-table" data-testid="batches-table">
                <caption className="visually-hidden">Batches, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Batch</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col" className="numeric">Cost so far</th>
                    <th scope="col">When</th><th scope="col"><span className="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((batch) => (
                    <tr key={batch.id} data-batch-id={batch.id} data-status={batch.status}>
                      <th scope="row">
                        <span className="mono batch-id">{batch.id}</span>
                        <span className="key-meta">{batch.endpoint} · key {batch.key_name ?? batch.key_id}</span>
                        {batch.errors.map((message) => <span key={message} className="key-meta batch-error">{message}</span>)}
                      </th>
                      <td data-label="Status"><Badge tone={STATUS[batch.status].tone}>{STATUS[batch.status].label}</Badge></td>
                      <td data-label="Progress"><Progress batch={batch} /></td>
                      <td data-label="Cost so far" className="numeric" data-testid="batch-cost">{display.format(batch.cost_usd, { precise: true })}</td>
                      <td data-label="When">
                        <span className="batch-time">Created <time dateTime={batch.created_at}>{formatDateTime(batch.created_at)}</time></span>
                        {batch.ended_at === null
                          ? <span className="key-meta">Window ends {formatDateTime(batch.expires_at)}</span>
                          : <span className="key-meta" data-testid="batch-ended">Ended <time dateTime={batch.ended_at}>{formatDateTime(batch.ended_at)}</time></span>}
                      </td>
                      <td className="cell-actions">
                        {batch.can_manage ? (
                          <div className="row-actions">
                            {batch.has_output ? <a className="button button-ghost" href={`/api/console/batches/${encodeURIComponent(batch.id)}/output`} download aria-label={`Download the results of ${batch.id}`}>Results</a> : null}
                            {batch.has_errors ? <a className="button button-ghost" href={`/api/console/batches/${encodeURIComponent(batch.id)}/errors`} download aria-label={`Download the errors of ${batch.id}`}>Errors</a> : null}
                            {CANCELLABLE.has(batch.status) ? <Button variant="danger" onClick={() => { cancel.reset(); setCancelling(batch); }} aria-label={`Cancel ${batch.id}`}>Cancel</Button> : null}
                          </div>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {batches.hasNextPage ? (
            <div className="form-actions">
              <Button onClick={() => void batches.fetchNextPage()} busy={batches.isFetchingNextPage}>Show older batches</Button>
            </div>
          ) : null}
        </Card>
      )}

      <Dialog open={cancelling !== null} title="Cancel batch" onClose={() => setCancelling(null)}>
        {cancelling === null ? null : (
          <div className="stack">
            <p>Lines of <span className="mono">{cancelling.id}</span> not started yet will not run and the money held for them is released. Lines running now finish and are charged; their results stay downloadable.</p>
            {cancel.isError ? <Alert tone="error">{errorMessage(cancel.error)}</Alert> : null}
            <div className="form-actions">
              <Button onClick={() => setCancelling(null)}>Keep running</Button>
              <Button variant="danger" busy={cancel.isPending} onClick={() => cancel.mutate(cancelling.id, { onSuccess: () => setCancelling(null) })}>Cancel batch</Button>
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
