import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import type { ConsoleModelListJson, CreatedKeyJson, KeyAnswerJson, KeyListJson, OfferedGuardrailListJson, OfferedMcpServerListJson } from '../../../../src/contract/index.js';
import type { KeyInput } from '../../api/types';

export const keysQueryKey = ['keys'] as const;

export function useKeys(enabled = true) {
  const api = useApi();
  return useQuery({ queryKey: keysQueryKey, queryFn: () => api.get<KeyListJson>('/api/keys'), enabled });
}

export function useModels() {
  const api = useApi();
  return useQuery({ queryKey: ['models'], queryFn: () => api.get<ConsoleModelListJson>('/api/models'), staleTime: 5 * 60_000 });
}

/** The guardrail policies accounts may attach to keys. */
export function useOfferedGuardrails() {
  const api = useApi();
  return useQuery({ queryKey: ['guardrails'], queryFn: () => api.get<OfferedGuardrailListJson>('/api/guardrails'), staleTime: 60_000 });
}

/** The MCP servers the account's keys may name. */
export function useOfferedMcpServers() {
  const api = useApi();
  return useQuery({ queryKey: ['mcp-servers'], queryFn: () => api.get<OfferedMcpServerListJson>('/api/mcp-servers'), staleTime: 60_000 });
}

export function useCreateKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: Partial<KeyInput>) => api.post<CreatedKeyJson>('/api/keys', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}

export function useUpdateKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, changes }: { id: string; changes: Partial<KeyInput> & { status?: 'enabled' | 'disabled' } }) =>
      api.patch<KeyAnswerJson>(`/api/keys/${encodeURIComponent(id)}`, changes),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}

export function useRevokeKey() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.post<KeyAnswerJson>(`/api/keys/${encodeURIComponent(id)}/revoke`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey }),
  });
}
