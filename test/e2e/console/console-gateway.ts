/** A gateway with mail captured over SMTP and X-Forwarded-For trusted, for the console's end-to-end tests. */
import type { Clock } from '../../../src/shared/clock.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { SmtpCapture } from '../../support/smtp-capture.js';

export interface ConsoleGateway {
  gateway: TestGateway;
  mail: SmtpCapture;
  /** Moves the gateway's clock (TOTP steps, token expiry) by this many ms from real time. */
  shift: { offset: number };
  client(): ConsoleClient;
  close(): Promise<void>;
}

export async function startConsoleGateway(env: Record<string, string> = {}): Promise<ConsoleGateway> {
  const mail = new SmtpCapture();
  await mail.start();
  const shift = { offset: 0 };
  const clock: Clock = { now: () => Date.now() + shift.offset };
  const gateway = await startTestGateway({ env: { SMTP_URL: mail.url(), TRUST_PROXY: 'all', ...env }, clock });
  return {
    gateway,
    mail,
    shift,
    client: () => new ConsoleClient(gateway.consoleUrl),
    async close() {
      await gateway.close();
      await mail.stop();
    },
  };
}

export interface SignedUpUser {
  client: ConsoleClient;
  email: string;
  password: string;
  accountId: string;
  userId: string;
}

/** Signs up a new person (own IP) and, unless told otherwise, confirms the email through the mailed link. */
export async function signUpUser(setup: ConsoleGateway, options: { verify?: boolean } = {}): Promise<SignedUpUser> {
  const client = setup.client();
  const email = uniqueEmail();
  const password = strongPassword();
  const answer = await client.signUp(email, password);
  if (answer.status !== 201) throw new Error(`sign-up answered ${answer.status}: ${answer.text}`);
  const body = answer.body as { user: { id: string }; account: { id: string } };
  if (options.verify ?? true) {
    const token = linkToken(await waitForMail(setup.mail, email, /confirm your email/i));
    const verified = await client.request('POST', '/api/auth/verify-email', { token });
    if (verified.status !== 200) throw new Error(`verify-email answered ${verified.status}: ${verified.text}`);
  }
  return { client, email, password, accountId: body.account.id, userId: body.user.id };
}

/**
 * Limit windows are aligned to the epoch: waits until at least `marginMs` remain in the current window of
 * `windowMs`, so a test that fills a window does not straddle its edge.
 */
export async function awayFromWindowEdge(windowMs: number, marginMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
