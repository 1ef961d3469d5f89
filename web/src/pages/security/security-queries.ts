import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { sessionQueryKey, useApi } from '../../api/api-context';
import type { TwoFactorSetupJson } from '../../../../src/contract/index.js';
import type { SessionRow } from '../../api/types';

export const sessionsQueryKey = ['me', 'sessions'] as const;

export function useSessions() {
  const api = useApi();
  return useQuery({ queryKey: sessionsQueryKey, queryFn: () => api.get<{ data: SessionRow[] }>('/api/me/sessions') });
}

export function useEndSession() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.delete(`/api/me/sessions/${encodeURIComponent(id)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sessionsQueryKey }),
  });
}

export type TwoFactorSetup = TwoFactorSetupJson;

export function useTwoFactorSetup() {
  const api = useApi();
  return useMutation({ mutationFn: () => api.post<TwoFactorSetup>('/api/me/two-factor/setup') });
}

export function useTwoFactorChange(action: 'enable' | 'disable' | 'backup-codes') {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => api.post<{ backup_codes: string[] } | undefined>(`/api/me/two-factor/${action}`, { code }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sessionQueryKey }),
  });
}

export function useChangePassword() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { current_password: string; new_password: string }) => api.post('/api/me/password', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sessionsQueryKey }),
  });
}
