import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import { formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import type { ConsoleAnnouncementJson, ConsoleAnnouncementListJson } from '../../../../src/contract/index.js';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';

/** One of `GET /api/announcements` (docs/console-api.md). */
export type Announcement = ConsoleAnnouncementJson;

const announcementsKey = ['announcements'] as const;

export function useAnnouncements() {
  const api = useApi();
  return useQuery({
    queryKey: announcementsKey,
    queryFn: () => api.get<ConsoleAnnouncementListJson>('/api/announcements'),
    staleTime: 60_000,
    refetchInterval: 5 * 60_000,
  });
}

function useDismiss() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.post<void>(`/api/announcements/${encodeURIComponent(id)}/dismiss`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: announcementsKey }),
  });
}

const TONE = { info: 'info', warning: 'warning', critical: 'error' } as const;

/** The newest announcement this person has not dismissed, above every page. */
export function AnnouncementBanner() {
  const announcements = useAnnouncements();
  const dismiss = useDismiss();
  const newest = announcements.data?.data.find((item) => !item.dismissed);
  if (newest === undefined) return null;
  const others = (announcements.data?.data.length ?? 1) - 1;
  return (
    <div className={`alert alert-${TONE[newest.level]} announcement-banner`} role={newest.level === 'critical' ? 'alert' : 'status'} data-testid="announcement-banner">
      <div className="announcement-text">
        <strong>{newest.title}</strong>
        <p className="announcement-body">{newest.body}</p>
        <span className="key-meta">{formatDateTime(newest.published_at)}{others > 0 ? <> · <Link to="/announcements">{others} more</Link></> : null}</span>
        {dismiss.isError ? <span className="field-error">{errorMessage(dismiss.error)}</span> : null}
      </div>
      <Button variant="ghost" onClick={() => dismiss.mutate(newest.id)} busy={dismiss.isPending} aria-label={`Dismiss the announcement “${newest.title}”`}>Dismiss</Button>
    </div>
  );
}

/** Every active announcement, newest first, the dismissed ones too. */
export function AnnouncementsPage() {
  useDocumentTitle('Announcements');
  const announcements = useAnnouncements();
  const dismiss = useDismiss();
  return (
    <div className="page stack">
      <PageHeader title="Announcements" description="News from the operator of this gateway: maintenance, new models, changes." />
      {announcements.isPending ? <Loading /> : null}
      {announcements.error != null ? <Alert tone="error">{errorMessage(announcements.error)}</Alert> : null}
      {announcements.data?.data.length === 0 ? <Card><p className="empty">No announcements right now.</p></Card> : null}
      {announcements.data?.data.map((item) => (
        <Card key={item.id} title={<>{item.title} <Badge tone={item.level === 'critical' ? 'danger' : item.level === 'warning' ? 'warning' : 'info'}>{item.level}</Badge></>}
          actions={item.dismissed ? <span className="key-meta">Dismissed</span> : <Button variant="ghost" onClick={() => dismiss.mutate(item.id)} busy={dismiss.isPending}>Dismiss</Button>}>
          <p className="announcement-body" data-testid="announcement-body">{item.body}</p>
          <p className="key-meta">Published {formatDateTime(item.published_at)}{item.expires_at === null ? '' : ` · until ${formatDateTime(item.expires_at)}`}</p>
        </Card>
      ))}
    </div>
  );
}
