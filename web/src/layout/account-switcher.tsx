import { useQuery } from '@tanstack/react-query';
import * as DropdownMenu from '@radix-ui/react-dropdown-menu';
import { useApi } from '../api/api-context';
import type { SessionAccounts } from '../api/money-types';

/** Menu items moving the session to the user's other accounts (shown only to members of more than one). */
export function AccountSwitcherItems() {
  const api = useApi();
  const accounts = useQuery({ queryKey: ['session-accounts'], queryFn: () => api.get<SessionAccounts>('/api/session/accounts'), staleTime: 60_000 });
  const others = (accounts.data?.data ?? []).filter((account) => !account.current);
  if (others.length === 0) return null;
  const switchTo = async (accountId: string) => {
    await api.post('/api/session/account', { account_id: accountId });
    // A full load: nothing of the other account stays in memory.
    window.location.replace('/keys');
  };
  return (
    <>
      <DropdownMenu.Label className="menu-item">Switch account</DropdownMenu.Label>
      {others.map((account) => (
        <DropdownMenu.Item key={account.id} className="menu-item" onSelect={() => void switchTo(account.id)}>{account.email} ({account.role})</DropdownMenu.Item>
      ))}
      <DropdownMenu.Separator className="menu-separator" />
    </>
  );
}
