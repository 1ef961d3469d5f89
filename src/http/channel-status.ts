import type { GatewayServices } from '../services.js';
import type { Channel } from '../domain/records.js';

export type PublicChannelStatus = 'operational' | 'degraded' | 'down' | 'disabled';

/**
 * A channel's status for /api/status and the admin: disabled (off, or a type this gateway cannot serve), down and
 * degraded from its breakers (ChannelHealth.status), degraded also while one of its keys is flagged; else
 * operational.
 */
export function channelStatus(services: GatewayServices, channel: Channel): PublicChannelStatus {
  if (!channel.enabled || !services.adapters.supports(channel.type)) return 'disabled';
  const status = services.health.status(channel);
  if (status === 'operational' && services.credentials.rejectedCount(channel) > 0) return 'degraded';
  return status;
}
