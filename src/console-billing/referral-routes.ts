import type { Router } from '../http/router.js';
import { sendJson } from '../http/respond.js';
import { describeReferralReward } from '../referrals/referral-reward.js';
import type { GatewayServices } from '../services.js';
import { requirePermission, type Authenticate } from './console-actor.js';
import { consoleBase } from './console-base.js';
import { referredJson, rewardJson } from './json.js';

/** The account's referral code and link, the sign-ups it brought and what they earned. */
export function addReferralConsoleRoutes(router: Router, services: GatewayServices, authenticate: Authenticate): void {
  const { referrals, config } = services.commerce;
  router.add('GET', '/api/console/referrals', async (context) => {
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
    });
  });
}
