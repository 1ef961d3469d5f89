import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AccountMcpServerJson, AccountMcpServerListJson } from '../../../../src/contract/index.js';
import { useApi } from '../../api/api-context';

export type AccountMcpServer = AccountMcpServerJson;

/** What a server is registered or changed with (the console API takes no more: price, limits and rules are the operator's). */
export interface AccountMcpServerInput {
  name?: string;
  url?: string;
  transport?: AccountMcpServer['transport'];
  /** Replaces every header; values are write-only. */
  headers?: Record<string, string>;
  enabled?: boolean;
}

export const ownMcpServersQueryKey = ['mcp-servers', 'own'] as const;

/** The account's own servers, refreshed while the page is open so background health checks show up. */
export function useOwnMcpServers(enabled: boolean) {
  const api = useApi();
  return useQuery({ queryKey: ownMcpServersQueryKey, queryFn: () => api.get<AccountMcpServerListJson>('/api/mcp-servers/own'), enabled, refetchInterval: 15_000 });
}

/** Registers a server (`id` null) or changes one; the key form's list of servers is asked again after either. */
export function useSaveMcpServer() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, input }: { id: string | null; input: AccountMcpServerInput }) => (id === null
      ? api.post<AccountMcpServer>('/api/mcp-servers', input)
      : api.patch<AccountMcpServer>(`/api/mcp-servers/${encodeURIComponent(id)}`, input)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['mcp-servers'] }),
  });
}

export function useDeleteMcpServer() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.delete<undefined>(`/api/mcp-servers/${encodeURIComponent(id)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['mcp-servers'] }),
  });
}

/** Runs one server's health check now; its answer (the server with the new health) replaces it in the list. */
export function useCheckMcpServer() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api.post<AccountMcpServer>(`/api/mcp-servers/${encodeURIComponent(id)}/check`, {}),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ownMcpServersQueryKey }),
  });
}
