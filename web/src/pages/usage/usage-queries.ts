import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import type { DailyUsageListJson } from '../../../../src/contract/index.js';
import type { Overview, Page, UsageRow } from '../../api/types';

export interface UsageFilters {
  key_id?: string;
  model?: string;
  status?: string;
  /** `YYYY-MM-DD`, inclusive, UTC days. */
  from?: string;
  to?: string;
}

/** The API takes instants: a day range becomes [from 00:00Z, the day after `to` 00:00Z). */
export function filterQuery(filters: UsageFilters): Record<string, string | undefined> {
  const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
  return {
    key_id: filters.key_id,
    model: filters.model,
    status: filters.status,
    from: filters.from === undefined ? undefined : `${filters.from}T00:00:00.000Z`,
    to: filters.to === undefined ? undefined : dayAfter(filters.to),
  };
}

export function useOverview() {
  const api = useApi();
  return useQuery({ queryKey: ['overview'], queryFn: () => api.get<Overview>('/api/overview'), refetchInterval: 60_000 });
}

export function useUsageRows(filters: UsageFilters) {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: ['usage', filters],
    queryFn: ({ pageParam }) => api.get<Page<UsageRow>>('/api/usage', { ...filterQuery(filters), limit: '50', cursor: pageParam ?? undefined }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
  });
}

export function useDailyUsage(filters: UsageFilters) {
  const api = useApi();
  const query = filterQuery(filters);
  return useQuery({
    queryKey: ['usage-daily', query.from, query.to],
    queryFn: () => api.get<DailyUsageListJson>('/api/usage/daily', { from: query.from, to: query.to }),
  });
}
