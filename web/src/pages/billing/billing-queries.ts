import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { sessionQueryKey, useApi } from '../../api/api-context';
import type { Billing, BillingProfile, FxRates, Invoice, ListPage } from '../../api/money-types';
import type { OpenedCheckoutJson, RedemptionJson } from '../../../../src/contract/index.js';

export function useBilling(pollWhilePending: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: ['billing'],
    queryFn: () => api.get<Billing>('/api/console/billing'),
    // Back from Stripe: the balance rises when Stripe's webhook arrives, usually within seconds.
    refetchInterval: (query) => (pollWhilePending && (query.state.data?.recent_top_ups.some((topUp) => topUp.status === 'open') ?? true) ? 2000 : false),
  });
}

export function useFx() {
  const api = useApi();
  return useQuery({ queryKey: ['fx'], queryFn: () => api.get<FxRates>('/api/console/fx'), staleTime: 10 * 60_000 });
}

export function useBillingProfile() {
  const api = useApi();
  return useQuery({ queryKey: ['billing-profile'], queryFn: () => api.get<BillingProfile>('/api/console/billing/profile') });
}

export function useInvoices() {
  const api = useApi();
  return useQuery({ queryKey: ['invoices'], queryFn: () => api.get<ListPage<Invoice>>('/api/console/billing/invoices', { limit: '50' }) });
}

export function useSaveProfile() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (profile: { name: string; address: string; country: string; tax_id: string | null }) => api.put<BillingProfile>('/api/console/billing/profile', profile),
    onSuccess: (saved) => queryClient.setQueryData(['billing-profile'], saved),
  });
}

export function useCheckout() {
  const api = useApi();
  return useMutation({ mutationFn: (amountUsd: number) => api.post<OpenedCheckoutJson>('/api/console/billing/checkout', { amount_usd: amountUsd }) });
}

export function useRedeem() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => api.post<RedemptionJson>('/api/console/billing/redeem', { code }),
    onSuccess: () => Promise.all([queryClient.invalidateQueries({ queryKey: ['billing'] }), queryClient.invalidateQueries({ queryKey: sessionQueryKey })]),
  });
}
