import type { GatewayConfig } from '../config/gateway-config.js';
import type { Logger } from '../shared/logger.js';
import { LogMailer } from './log-mailer.js';
import type { Mailer } from './mailer.js';
import { SmtpMailer } from './smtp-mailer.js';

/** SMTP when SMTP_URL is set, otherwise the log. */
export function createMailer(config: Pick<GatewayConfig, 'smtpUrl' | 'mailFrom'>, logger: Logger): Mailer {
  return config.smtpUrl === null ? new LogMailer(logger) : new SmtpMailer({ url: config.smtpUrl, from: config.mailFrom });
}
