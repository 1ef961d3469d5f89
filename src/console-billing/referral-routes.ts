import { sendJson } from '../http/respond.js';
import { describeReferralReward } from '../referrals/referral-reward.js';
import { requirePermission, type BillingRouteDeps } from './console-actor.js';
import { consoleBase } from './console-base.js';
import { referredJson, rewardJson } from './json.js';
import { consoleRoutes } from '../console/console-route-table.js';
import type { ReferralsJson } from '../contract/billing.js';

/** The account's referral code and link, the sign-ups it brought and what they earned. */
export const REFERRAL_CONSOLE_ROUTES = consoleRoutes(({ services, authenticate }: BillingRouteDeps) => {
  const { referrals, config } = services.commerce;
  return { services, authenticate, referrals, config };
}, [
  { method: 'GET', path: '/api/console/referrals', who: 'caller', handler: ({ services, authenticate, referrals, config }) => async (context) => {
    const actor = await authenticate(context);
    requirePermission(actor, 'billing:read');
    const overview = await referrals.overview(actor.accountId);
    sendJson(context, 200, {
      object: 'referrals',
      code: overview.code,
      link: referrals.link(overview.code, consoleBase(services.config.consoleUrl, context)),
      reward: describeReferralReward(config.referralReward),
      referred: overview.referred.map(referredJson),
      rewards: overview.rewards.map(rewardJson),
    } satisfies ReferralsJson);
  } },
]);
