import { createContext, useContext, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiClient } from './client';
import type { ConsoleConfig, Session } from './types';

const ApiContext = createContext<ApiClient | null>(null);

export function ApiProvider({ client, children }: { client: ApiClient; children: ReactNode }) {
  return <ApiContext.Provider value={client}>{children}</ApiContext.Provider>;
}

export function useApi(): ApiClient {
  const client = useContext(ApiContext);
  if (client === null) throw new Error('useApi outside ApiProvider');
  return client;
}

export const sessionQueryKey = ['session'] as const;

export function useSession() {
  const api = useApi();
  return useQuery({ queryKey: sessionQueryKey, queryFn: () => api.session(), staleTime: 30_000 });
}

export function useConsoleConfig() {
  const api = useApi();
  return useQuery({ queryKey: ['config'], queryFn: () => api.get<ConsoleConfig>('/api/config'), staleTime: Infinity });
}

/** After sign-in, sign-out or a change of the user: every cached answer belonged to the old session. */
export function useResetSession(): (next?: Session) => Promise<void> {
  const queryClient = useQueryClient();
  return async (next) => {
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'config' && query.queryKey[0] !== 'session' });
    if (next !== undefined) queryClient.setQueryData(sessionQueryKey, next);
    await queryClient.invalidateQueries({ queryKey: sessionQueryKey });
  };
}
