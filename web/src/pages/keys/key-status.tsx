import type { KeyStatus } from '../../api/types';
import { Badge } from '../../ui/feedback';

const tones = { enabled: 'success', disabled: 'neutral', revoked: 'danger', expired: 'warning', paused: 'warning' } as const;
const labels: Record<KeyStatus, string> = { enabled: 'Enabled', disabled: 'Disabled', revoked: 'Revoked', expired: 'Expired', paused: 'Paused (budget)' };

export function KeyStatusBadge({ status }: { status: KeyStatus }) {
  return <Badge tone={tones[status]}>{labels[status]}</Badge>;
}
