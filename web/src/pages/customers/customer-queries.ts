import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { CustomerRuleInputJson, CustomerRuleJson, CustomerRuleListJson, DeletedCustomerRuleJson } from '../../../../src/contract/index.js';
import { useApi } from '../../api/api-context';

export type CustomerRule = CustomerRuleJson;
export type CustomerRuleInput = CustomerRuleInputJson;

export const customerRulesQueryKey = ['customer-rules'] as const;

export function useCustomerRules() {
  const api = useApi();
  return useQuery({ queryKey: customerRulesQueryKey, queryFn: () => api.get<CustomerRuleListJson>('/api/customer-rules') });
}

/** Creates or replaces a rule (the customer's own, or every customer's with `customer` null). */
export function usePutCustomerRule() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: CustomerRuleInput) => api.put<CustomerRuleJson>('/api/customer-rules', input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: customerRulesQueryKey }),
  });
}

export function useDeleteCustomerRule() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (customer: string | null) => api.delete<DeletedCustomerRuleJson>(customer === null ? '/api/customer-rules' : `/api/customer-rules?customer=${encodeURIComponent(customer)}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: customerRulesQueryKey }),
  });
}
