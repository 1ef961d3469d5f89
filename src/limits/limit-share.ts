import { createHash } from 'node:crypto';
import type { FleetView } from '../redis/fleet-membership.js';

/**
 * This instance's share of `limit` while the instances cannot count together: the limit divided by the live
 * instances, the remainder going one unit each to `limit mod size` instances chosen by the rule's id (so different
 * rules favour different instances). The shares of all instances add up to the limit exactly.
 */
export function shareOfLimit(limit: number, ruleId: string, fleet: FleetView): number {
  if (fleet.size <= 1) return limit;
  const base = Math.floor(limit / fleet.size);
  const remainder = limit % fleet.size;
  if (remainder === 0) return base;
  const offset = createHash('sha1').update(ruleId).digest().readUInt32BE(0) % fleet.size;
  const position = (fleet.rank - offset + fleet.size) % fleet.size;
  return base + (position < remainder ? 1 : 0);
}
