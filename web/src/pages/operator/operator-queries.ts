import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useSession } from '../../api/api-context';
import type { OperatorStanding } from '../../api/types';

export interface OperatorMe extends OperatorStanding {
  user: { id: string; email: string };
}

/**
 * The signed-in user's operator standing, read from the session every page loads anyway (`data` null for everyone
 * who is not an operator): no request of its own, so a user who is no operator never meets a 403.
 */
export function useOperatorMe(): { isPending: boolean; isError: boolean; error: unknown; data: OperatorMe | null | undefined } {
  const session = useSession();
  const user = session.data?.user ?? null;
  const standing = session.data?.operator ?? null;
  const data = session.data === undefined ? undefined : user === null || standing === null ? null : { ...standing, user: { id: user.id, email: user.email } };
  return { isPending: session.isPending, isError: session.isError, error: session.error, data };
}

/** A read of the operator API (`path` below /api/operator/), optionally refreshed every `refreshMs`. */
export function useOperatorGet<T>(path: string, query?: Record<string, string | undefined>, options: { refreshMs?: number; enabled?: boolean } = {}) {
  const api = useApi();
  return useQuery({
    queryKey: ['operator', path, query],
    queryFn: () => api.get<T>(`/api/operator/${path}`, query),
    ...(options.refreshMs === undefined ? {} : { refetchInterval: options.refreshMs }),
    enabled: options.enabled ?? true,
  });
}

/** A change through the operator API; every operator read is refetched afterwards. */
export function useOperatorAction<T = unknown>() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ method, path, body }: { method: 'POST' | 'PATCH' | 'PUT' | 'DELETE'; path: string; body?: unknown }) => api.request<T>(method, `/api/operator/${path}`, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['operator'] }),
  });
}

export function canWrite(me: OperatorMe | null | undefined): boolean {
  return me?.permissions.includes('write') === true;
}
