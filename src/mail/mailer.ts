/** One outgoing mail. Plain text: alerts and notices need nothing more. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing mail (alerts now; password reset and support later). `send` resolves once the mail server accepted the
 * message and rejects when it did not, so callers can retry. Implementations: SMTP (SMTP_URL) and the log.
 */
export interface Mailer {
  /** `smtp` or `log`, for the startup line. */
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  close(): void;
}
