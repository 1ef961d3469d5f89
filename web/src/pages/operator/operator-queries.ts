import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';

export interface OperatorMe {
  user: { id: string; email: string };
  role: 'owner' | 'admin' | 'support' | 'viewer';
  two_factor_required: boolean;
  permissions: ('read' | 'write' | 'support:reply' | 'operators:manage')[];
}

/** The signed-in user's operator role; fails with `not_operator` for everyone else. */
export function useOperatorMe() {
  const api = useApi();
  return useQuery({ queryKey: ['operator', 'me'], queryFn: () => api.get<OperatorMe>('/api/operator/me'), retry: false, staleTime: 60_000 });
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

export function canWrite(me: OperatorMe | undefined): boolean {
  return me?.permissions.includes('write') === true;
}
