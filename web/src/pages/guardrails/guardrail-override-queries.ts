import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AccountGuardrailJson, AccountGuardrailListJson } from '../../../../src/contract/index.js';
import { useApi } from '../../api/api-context';

export type AccountGuardrail = AccountGuardrailJson;
export type OverrideScope = 'account' | 'project' | 'key';
export type OverrideMode = 'off' | 'log' | 'mask';

export const guardrailOverridesQueryKey = ['guardrail-overrides'] as const;

export function useAccountGuardrails(enabled = true) {
  const api = useApi();
  return useQuery({ queryKey: guardrailOverridesQueryKey, queryFn: () => api.get<AccountGuardrailListJson>('/api/guardrail-overrides'), enabled });
}

const pathOf = (name: string) => `/api/guardrail-overrides/${encodeURIComponent(name)}`;

/** Sets (mode) or clears (null) the account's override of one policy at one target. */
export function useSetOverride() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, scope, targetId, mode }: { name: string; scope: OverrideScope; targetId?: string; mode: OverrideMode | null }) => mode === null
      ? api.delete<null>(`${pathOf(name)}?scope=${scope}${targetId === undefined ? '' : `&target_id=${encodeURIComponent(targetId)}`}`)
      : api.put<AccountGuardrail>(pathOf(name), { scope, ...(targetId === undefined ? {} : { target_id: targetId }), mode }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: guardrailOverridesQueryKey }),
  });
}
