import type { Logger } from '../shared/logger.js';
import type { Mailer } from './mailer.js';

/**
 * SMTP_URL unset: each mail becomes one log line naming its recipient and subject. The body is left out on purpose:
 * mails may one day carry reset links or codes, and the log is no place for them.
 */
export class LogMailer implements Mailer {
  readonly kind = 'log';

  constructor(private readonly logger: Logger) {}

  send(message: { to: string; subject: string }): Promise<void> {
    this.logger.info('mail not sent (SMTP_URL is not set)', { to: message.to, subject: message.subject });
    return Promise.resolve();
  }

  close(): void {}
}
