import { describeError } from '../shared/logger.js';
import type { ConsoleDeps } from './console-deps.js';

export type ConsoleMailKind = 'verify-email' | 'password-reset' | 'operator-invitation';

const CONTENT: Record<ConsoleMailKind, { subject: string; path: string; intro: string; validity: string }> = {
  'verify-email': {
    subject: 'Confirm your email address',
    path: '/verify-email',
    intro: 'Confirm the email address of your console account by opening this link:',
    validity: 'The link works once and expires in 24 hours. If you did not sign up, ignore this mail.',
  },
  'password-reset': {
    subject: 'Reset your console password',
    path: '/reset-password',
    intro: 'Someone (hopefully you) asked to reset the password of your console account. Choose a new one here:',
    validity: 'The link works once and expires in 30 minutes. If you did not ask for this, ignore this mail; your password is unchanged.',
  },
  'operator-invitation': {
    subject: 'You are invited to operate the gateway',
    path: '/reset-password',
    intro: 'An owner of the gateway made you one of its operators. Choose the password of your console account here, then turn on two-factor sign-in under Security (operators must use it):',
    validity: 'The link works once and expires in 72 hours. If you did not expect this, ignore this mail.',
  },
};

export function consoleLink(deps: ConsoleDeps, kind: ConsoleMailKind, token: string): string {
  return `${deps.urls.console()}${CONTENT[kind].path}?token=${encodeURIComponent(token)}`;
}

/**
 * Sends a console mail carrying a one-time link. Without SMTP_URL the link goes to the log line instead (the
 * operator hands it on), as the issue of the link is the only way to finish the flow. A failed delivery is logged
 * and not surfaced: the caller answers the same either way, so nothing leaks about the address.
 */
export async function sendConsoleMail(deps: ConsoleDeps, kind: ConsoleMailKind, to: string, token: string): Promise<void> {
  const { mailer, logger, config } = deps.services;
  const content = CONTENT[kind];
  const link = consoleLink(deps, kind, token);
  const product = config.keyBrand;
  if (mailer.kind === 'log') {
    logger.info('console mail not sent (SMTP_URL is not set)', { to, subject: content.subject, link });
    return;
  }
  try {
    await mailer.send({ to, subject: `${product}: ${content.subject}`, text: `${content.intro}\n\n${link}\n\n${content.validity}\n` });
  } catch (error) {
    logger.warn('console mail failed', { to, kind, ...describeError(error) });
  }
}
