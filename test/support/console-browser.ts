/**
 * What the console's browser tests share: a real gateway on 127.0.0.1 with an SMTP sink and a mock OpenAI
 * upstream behind a priced model, Debian's Chromium, a CSP-violation recorder per page, screenshots, and the
 * steps every journey starts with (sign up, open the mailed link).
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import type { Clock } from '../../src/shared/clock.js';
import { addRoutedModel, startTestGateway, type TestGateway } from './gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from './mock-openai-upstream.js';
import { SmtpCapture } from './smtp-capture.js';
import { ensureWebBuild, launchChromium, recordCspViolations, type CspViolation, type LaunchedBrowser } from './chromium.js';

export const CHAT_MODEL = 'console-chat';
export const OTHER_MODEL = 'console-other';
export const PASSWORD = 'correct horse battery staple 42';

export interface ConsoleFixture {
  gateway: TestGateway;
  smtp: SmtpCapture;
  upstream: MockOpenAIUpstream;
  chromium: LaunchedBrowser;
  browser: Browser;
  screenshots: string;
  /** The gateway's time: real time moved on by `nextTotpStep`. */
  now(): number;
  /** Moves the gateway's clock on by this many ms. */
  advanceClock(ms: number): void;
  close(): Promise<void>;
}

/** `env` adds gateway settings (the money journey's fake Stripe, referral reward, support address). */
export async function startConsoleFixture(env: Record<string, string> = {}): Promise<ConsoleFixture> {
  ensureWebBuild();
  const smtp = new SmtpCapture();
  await smtp.start();
  const upstream = await startMockOpenAIUpstream();
  let offset = 0;
  const clock: Clock = { now: () => Date.now() + offset };
  const gateway = await startTestGateway({ database: 'auto', env: { SMTP_URL: smtp.url(), MAIL_FROM: 'console@example.com', ...env }, clock });
  for (const model of [CHAT_MODEL, OTHER_MODEL]) {
    await addRoutedModel(gateway, {
      model,
      pricing: { input_per_mtok: 2, output_per_mtok: 8 },
      channel: { name: `mock-${model}`, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [model]: 'gpt-4o-mini' } },
    });
  }
  const chromium = await launchChromium();
  const screenshots = path.join(process.env.CONSOLE_SCREENSHOTS ?? path.join(tmpdir(), 'unigate-console-screenshots'));
  mkdirSync(screenshots, { recursive: true });
  return {
    gateway, smtp, upstream, chromium, browser: chromium.browser, screenshots,
    now: clock.now,
    advanceClock(ms) {
      offset += ms;
    },
    async close() {
      await chromium.close();
      await gateway.close();
      await upstream.close();
      await smtp.stop();
    },
  };
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  violations: CspViolation[];
  pageErrors: string[];
}

/** A page whose CSP violations and uncaught errors are collected, for a test to assert there were none. */
export async function openPage(browser: Browser, options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    colorScheme: options.colorScheme ?? 'light',
    deviceScaleFactor: 1,
  });
  context.setDefaultTimeout(15_000);
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { context, page, violations, pageErrors };
}

export function expectCleanPage(watched: WatchedPage): void {
  expect(watched.violations, 'Content-Security-Policy violations').toEqual([]);
  expect(watched.pageErrors, 'uncaught errors in the page').toEqual([]);
}

export async function screenshot(fixture: ConsoleFixture, page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(fixture.screenshots, `${name}.png`), fullPage: false, animations: 'disabled', caret: 'hide' });
}

/**
 * Screenshots of the page as it is now, at a desktop's and a phone's width, light and dark, each asserted to scroll
 * nothing sideways; the page is left at desktop width in light mode.
 */
export async function shotsAtBothWidths(fixture: ConsoleFixture, page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.waitForTimeout(100);
      expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} ${width} ${scheme}`).toBeLessThanOrEqual(0);
      await screenshot(fixture, page, `${name}-${width}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * The tables on the page that scroll sideways inside their `.table-scroll` frame (caption or test id of each);
 * at phone width every table that turns into cards fits its frame, so this is empty.
 */
export function sidewaysTables(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('.table-scroll')]
    .filter((frame) => frame.offsetParent !== null && frame.scrollWidth > frame.clientWidth)
    .map((frame) => {
      const table = frame.querySelector('table');
      return (table?.dataset.testid ?? table?.caption?.textContent ?? frame.textContent ?? '').trim().slice(0, 60) + ': ' + frame.scrollWidth + ' > ' + frame.clientWidth;
    })`) as Promise<string[]>;
}

/** The first link to `{console}/{route}?token=…` in the newest mail to `address`, waiting up to 10 s for it. */
export async function mailedLink(smtp: SmtpCapture, address: string, route: string, after = 0): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mails = smtp.to(address).slice(after);
    for (const mail of mails.reverse()) {
      const link = new RegExp(`https?://[^\\s"'<>]+/${route}\\?token=[A-Za-z0-9_%.~-]+`).exec(mail.text)?.[0];
      if (link !== undefined) return link;
    }
    if (Date.now() > deadline) throw new Error(`no ${route} mail to ${address}: ${JSON.stringify(smtp.to(address).map((mail) => mail.subject))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The TOTP code for a base32 secret (RFC 6238: SHA-1, 6 digits, 30 s), at `timestamp`. */
export function totpCode(secret: string, timestamp = Date.now()): string {
  return new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp });
}

/**
 * Moves the gateway's clock into the next 30-second TOTP step, so the next code (computed at `fixture.now()`)
 * differs from one already used, without waiting for real time to get there.
 */
export function nextTotpStep(fixture: ConsoleFixture): void {
  fixture.advanceClock(30_000 - (fixture.now() % 30_000) + 250);
}

/** Signs up through the form and opens the mailed verification link; returns the account's id. */
export async function signUpAndVerify(fixture: ConsoleFixture, page: Page, email: string, shots = false): Promise<string> {
  await page.goto(`${fixture.gateway.consoleUrl}/sign-up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  if (shots) await screenshot(fixture, page, 'sign-up');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/keys');
  await expect.poll(() => page.getByText('Confirm your email address').isVisible()).toBe(true);
  const link = await mailedLink(fixture.smtp, email, 'verify-email');
  expect(new URL(link).origin).toBe(fixture.gateway.consoleUrl);
  await page.goto(link);
  await page.getByText('Your email address is verified.').waitFor();
  if (shots) await screenshot(fixture, page, 'verify-email');
  const session = await page.request.get(`${fixture.gateway.consoleUrl}/api/session`);
  const body = (await session.json()) as { user: { email_verified: boolean } | null; account: { id: string } | null };
  expect(body.user?.email_verified).toBe(true);
  return body.account?.id ?? '';
}
