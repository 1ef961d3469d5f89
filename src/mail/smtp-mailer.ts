import type { Transporter } from 'nodemailer';
import type { MailMessage, Mailer } from './mailer.js';

export interface SmtpMailerOptions {
  /** smtp://user:pass@host:port (STARTTLS when offered) or smtps://… (TLS from the start). */
  url: string;
  from: string;
}

/** Short enough that a hung server cannot hold a delivery past the alert lease (see alert-checker.ts). */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/** Mail over SMTP with nodemailer: one connection per mail (mails are rare; nothing to keep open between them). */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp';
  readonly #options: SmtpMailerOptions;
  /** Made with the first mail: nodemailer (~3 MiB of heap) is loaded then, not at start-up. */
  #transport: Promise<Transporter> | null = null;

  constructor(options: SmtpMailerOptions) {
    this.#options = options;
  }

  async send(message: MailMessage): Promise<void> {
    this.#transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport({
      url: this.#options.url,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    }, { from: this.#options.from }));
    const transport = await this.#transport;
    await transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
  }

  close(): void {
    this.#transport?.then((transport) => transport.close()).catch(() => undefined);
  }
}
