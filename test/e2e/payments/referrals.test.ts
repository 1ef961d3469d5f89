/**
 * Referrals over the wire: each account's code and link in the console; a sign-up attributed once through the hook
 * the console's sign-up calls; rewards paid by the top-up webhook as `referral` ledger entries with their source
 * (percent of the first paid top-ups here); self-referral, unknown codes, repeated sign-ups from one address and
 * unverified emails earn nothing; a reward is taken back, in the share refunded or disputed, when the top-up that
 * earned it is, even below zero once spent; the ledger check passes after each scenario.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import type { ReferralProgram } from '../../../src/referrals/referral-program.js';
import { startConsoleTestServer, type ConsoleTestServer } from '../../support/console-test-auth.js';
import { FakeStripe } from '../../support/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { uniqueName } from '../admin/helpers.js';
import { balanceOf, consoleCall, expectLedgerBalanced, ledgerOf, newAccount } from './helpers.js';

let stripe: FakeStripe;
let gateway: TestGateway;
let consoleServer: ConsoleTestServer;
let referrals: ReferralProgram;
let webhookUrl: string;
let addressCount = 0;

interface ReferralsJson {
  code: string;
  link: string;
  reward: string;
  referred: Array<{ account_id: string; eligible: boolean; reason: string | null; rewarded_usd: number; rewards: number }>;
  rewards: Array<{ referred_account_id: string; amount_usd: number; reversed_usd: number; ledger_entry_id: string }>;
}

beforeAll(async () => {
  stripe = new FakeStripe();
  await stripe.start();
  gateway = await startTestGateway({ env: { ...stripe.env(), REFERRAL_REWARD: '10%', REFERRAL_REWARD_TOPUPS: '2', CONSOLE_URL: 'https://console.example.com' } });
  webhookUrl = `${gateway.consoleUrl}/api/webhooks/stripe`;
  consoleServer = await startConsoleTestServer(gateway.gateway.services);
  referrals = gateway.gateway.services.commerce.referrals;
});

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await stripe?.stop();
});

async function newActor(): Promise<ConsoleActorIdentity> {
  const email = `${uniqueName('ref')}@example.com`;
  return { accountId: await newAccount(gateway, email), userId: uniqueName('user'), role: 'owner', email };
}

function freshAddress(): string {
  addressCount += 1;
  return `203.0.113.${addressCount}`;
}

async function overview(actor: ConsoleActorIdentity): Promise<ReferralsJson> {
  const answer = await consoleCall<ReferralsJson>(consoleServer.url, actor, 'GET', '/api/console/referrals');
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

async function paidTopUp(actor: ConsoleActorIdentity, amountUsd: number): Promise<string> {
  const opened = await consoleCall<{ id: string }>(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: amountUsd });
  expect(opened.status, opened.text).toBe(201);
  stripe.pay(opened.body.id);
  const delivery = await stripe.deliver(webhookUrl, stripe.completedEvent(opened.body.id));
  expect(delivery.body.outcome).toBe('credited');
  return opened.body.id;
}

describe('referral codes and attribution', () => {
  it('gives each account one stable code and a link to the console\'s sign-up with it', async () => {
    const actor = await newActor();
    const first = await overview(actor);
    expect(first.code).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
    expect(first.link).toBe(`https://console.example.com/sign-up?ref=${first.code}`);
    expect(first.reward).toBe('10 % of the referred account\'s first 2 paid top-ups');
    expect((await overview(actor)).code).toBe(first.code);
    expect((await overview(await newActor())).code).not.toBe(first.code);
  });

  it('attributes a sign-up once; refuses unknown codes and self-referral', async () => {
    const referrer = await newActor();
    const { code } = await overview(referrer);
    const referred = await newActor();
    expect(await referrals.attributeSignUp({ referredAccountId: referred.accountId, code: code.toLowerCase(), ip: freshAddress(), emailVerified: true }))
      .toEqual({ attributed: true, referrerAccountId: referrer.accountId, status: 'eligible' });
    const other = await newActor();
    const otherCode = (await overview(other)).code;
    expect(await referrals.attributeSignUp({ referredAccountId: referred.accountId, code: otherCode, ip: freshAddress(), emailVerified: true }))
      .toEqual({ attributed: false, reason: 'already_attributed' });
    expect(await referrals.attributeSignUp({ referredAccountId: referrer.accountId, code, ip: freshAddress(), emailVerified: true }))
      .toEqual({ attributed: false, reason: 'self_referral' });
    expect(await referrals.attributeSignUp({ referredAccountId: other.accountId, code: 'NOSUCH99', ip: freshAddress(), emailVerified: true }))
      .toEqual({ attributed: false, reason: 'unknown_code' });
    expect((await overview(referrer)).referred.map((entry) => entry.account_id)).toEqual([referred.accountId]);
  });
});

describe('rewards', () => {
  it('pays the percentage of the first two paid top-ups as referral entries with their source, and nothing after', async () => {
    const referrer = await newActor();
    const { code } = await overview(referrer);
    const referred = await newActor();
    await referrals.attributeSignUp({ referredAccountId: referred.accountId, code, ip: freshAddress(), emailVerified: true });
    await paidTopUp(referred, 50);
    await paidTopUp(referred, 30);
    await paidTopUp(referred, 20);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(8);
    expect(await balanceOf(gateway, referred.accountId)).toBe(100);
    const entries = (await ledgerOf(gateway, referrer.accountId)).filter((entry) => entry.kind === 'referral');
    expect(entries.map((entry) => entry.amount_usd).sort()).toEqual([3, 5]);
    expect(entries.every((entry) => entry.reason === `referral:${referred.accountId}`)).toBe(true);
    const listed = await overview(referrer);
    expect(listed.referred).toEqual([expect.objectContaining({ account_id: referred.accountId, eligible: true, reason: null, rewarded_usd: 8, rewards: 2 })]);
    expect(listed.rewards.map((reward) => reward.amount_usd).sort()).toEqual([3, 5]);
    await expectLedgerBalanced(gateway);
  });

  it('a second sign-up from the same address earns nothing; neither does an unverified email until it is verified', async () => {
    const referrer = await newActor();
    const { code } = await overview(referrer);
    const address = freshAddress();
    const first = await newActor();
    const farmed = await newActor();
    expect((await referrals.attributeSignUp({ referredAccountId: first.accountId, code, ip: address, emailVerified: true }))).toMatchObject({ status: 'eligible' });
    expect((await referrals.attributeSignUp({ referredAccountId: farmed.accountId, code, ip: address, emailVerified: true }))).toMatchObject({ status: 'repeated_ip' });
    const unverified = await newActor();
    await referrals.attributeSignUp({ referredAccountId: unverified.accountId, code, ip: freshAddress(), emailVerified: false });

    await paidTopUp(farmed, 100);
    await paidTopUp(unverified, 100);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(0);
    const listed = await overview(referrer);
    expect(listed.referred.find((entry) => entry.account_id === farmed.accountId)).toMatchObject({ eligible: false, reason: 'repeated_ip', rewarded_usd: 0 });
    expect(listed.referred.find((entry) => entry.account_id === unverified.accountId)).toMatchObject({ eligible: false, reason: 'email_not_verified' });

    // Verified later: its second paid top-up is still among its first two, so it earns.
    await referrals.confirmEmail(unverified.accountId);
    await paidTopUp(unverified, 40);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(4);
    await paidTopUp(first, 10);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(5);
    await expectLedgerBalanced(gateway);
  });
});

describe('a reward stands only as long as the money that earned it', () => {
  async function referredPair(): Promise<{ referrer: ConsoleActorIdentity; referred: ConsoleActorIdentity }> {
    const referrer = await newActor();
    const referred = await newActor();
    await referrals.attributeSignUp({ referredAccountId: referred.accountId, code: (await overview(referrer)).code, ip: freshAddress(), emailVerified: true });
    return { referrer, referred };
  }

  const reversals = async (accountId: string): Promise<number[]> =>
    (await ledgerOf(gateway, accountId)).filter((entry) => entry.kind === 'refund' && (entry.reason ?? '').startsWith('referral-reversal:')).map((entry) => entry.amount_usd);

  it('a refund takes back the same share of the reward, and a full refund all of it; replays take nothing more', async () => {
    const { referrer, referred } = await referredPair();
    const sessionId = await paidTopUp(referred, 50);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(5);
    const partial = stripe.refundEvent(sessionId, 2000);
    expect((await stripe.deliver(webhookUrl, partial)).body.outcome).toBe('reversed');
    expect(await balanceOf(gateway, referrer.accountId)).toBe(3);
    expect((await stripe.deliver(webhookUrl, partial)).body.outcome).toBe('duplicate');
    expect((await stripe.deliver(webhookUrl, stripe.refundEvent(sessionId, 3000))).body.outcome).toBe('reversed');
    expect(await balanceOf(gateway, referrer.accountId)).toBe(0);
    expect(await balanceOf(gateway, referred.accountId)).toBe(0);
    expect((await reversals(referrer.accountId)).sort((a, b) => a - b)).toEqual([-3, -2]);
    const listed = await overview(referrer);
    expect(listed.referred).toEqual([expect.objectContaining({ account_id: referred.accountId, rewarded_usd: 0, rewards: 1 })]);
    expect(listed.rewards).toEqual([expect.objectContaining({ amount_usd: 5, reversed_usd: 5 })]);
    await expectLedgerBalanced(gateway);
  });

  it('a dispute takes it back too, below zero when the referrer has spent it', async () => {
    const { referrer, referred } = await referredPair();
    const sessionId = await paidTopUp(referred, 30);
    expect(await balanceOf(gateway, referrer.accountId)).toBe(3);
    // The referrer spends the reward (a debit as any charge would be).
    expect((await gateway.admin('POST', `/admin/accounts/${referrer.accountId}/credits`, { amount_usd: -3, reason: 'spent' })).status).toBe(200);
    expect((await stripe.deliver(webhookUrl, stripe.disputeEvent(sessionId, 3000))).body.outcome).toBe('reversed');
    expect(await balanceOf(gateway, referrer.accountId)).toBe(-3);
    expect(await reversals(referrer.accountId)).toEqual([-3]);
    // A refund of the same charge afterwards finds nothing left of the credit, nor of the reward.
    expect((await stripe.deliver(webhookUrl, stripe.refundEvent(sessionId, 3000))).body.outcome).toBe('nothing_to_reverse');
    expect(await balanceOf(gateway, referrer.accountId)).toBe(-3);
    await expectLedgerBalanced(gateway);
  });
});
