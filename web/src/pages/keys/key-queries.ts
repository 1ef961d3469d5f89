import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import type { ApiKey, CatalogModel, KeyInput, OfferedGuardrail, OfferedMcpServer } from '../../api/types';

export const keysQueryKey = ['keys'] as const;

export function useKeys(enabled = true) {
  const api = useApi();
  return useQuery({ queryKey: keysQueryKey, queryFn: () => api.get<{ data: ApiKey[] }>('/api/keys'), enabled });
}

export function useModels() {
  const api = useApi();
  return useQuery({ queryKey: ['models'], queryFn: () => api.get<{ data: CatalogModel[] }>('/api/models'), staleTime: 5 * 60_000 });
}

/** The guardrail policies accounts may attach to keys. */
export function useOfferedGuardrails() {
  const api = useApi();
  return useQuery({ queryKey: ['guardrails'], queryFn: () => api.get<{ data: OfferedGuardrail[] }>('/api/guardrails'), staleTime: 60_000 });
}

/** The MCP servers the account's keys may name. */
export function useOfferedMcpServers() {
  const api = useApi();
  return useQuery({ queryKey: ['mcp-servers'], queryFn: () => api.get<{ data: OfferedMcpServer[] }>('/api/mcp-servers'), staleTime: 60_000 });
}

export function useCreateKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: Partial<KeyInput>) => api.post<{ key: ApiKey; secret: string }>('/api/keys', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}

export function useUpdateKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, changes }: { id: string; changes: Partial<KeyInput> & { status?: 'enabled' | 'disabled' } }) =>
      api.patch<{ key: ApiKey }>(`/api/keys/${encodeURIComponent(id)}`, changes),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}

export function useRevokeKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.post<{ key: ApiKey }>(`/api/keys/${encodeURIComponent(id)}/revoke`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}
