import type { CommerceConfig } from '../config/commerce-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { SupportCategory, SupportTicket, SupportTicketStatus } from '../domain/commerce-records.js';
import type { SupportTicketWithReplies } from '../storage/repositories/support-repository.js';
import type { Storage } from '../storage/storage.js';

export const SUPPORT_CATEGORIES: readonly SupportCategory[] = ['billing', 'technical', 'account', 'other'];

/** What the user writes (and who): the ticket's id, status and times are the desk's to set. */
export type NewTicket = Pick<SupportTicket, 'accountId' | 'userId' | 'email' | 'subject' | 'category' | 'message' | 'requestId'>;

/**
 * Support tickets: stored first, then mailed to the operator's support address (SUPPORT_EMAIL) and confirmed to
 * the user. A mail that fails is logged; the ticket stands and is listed in the console and the admin API either way.
 */
export class SupportDesk {
  constructor(
    private readonly storage: Storage,
    private readonly mailer: Mailer,
    private readonly config: CommerceConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async open(input: NewTicket): Promise<SupportTicketWithReplies> {
    const now = this.clock.now();
    const ticket: SupportTicket = { id: newId('tkt', now), ...input, status: 'open', createdAt: now, updatedAt: now };
    await this.storage.support.create(ticket);
    const request = ticket.requestId === null ? '' : `Request id: ${ticket.requestId}\n`;
    await Promise.all([
      this.config.supportEmail === null
        ? Promise.resolve(this.logger.info('support ticket opened (SUPPORT_EMAIL is not set: no mail to the operator)', { ticket: ticket.id }))
        : this.#send({
          to: this.config.supportEmail,
          subject: `[${ticket.id}] ${ticket.category}: ${ticket.subject}`,
          text: `Account: ${ticket.accountId}\nUser: ${ticket.userId} <${ticket.email}>\nCategory: ${ticket.category}\n${request}\n${ticket.message}\n\nReply with POST /admin/support/tickets/${ticket.id}/replies.\n`,
        }, ticket.id),
      this.#send({
        to: ticket.email,
        subject: `We received your request: ${ticket.subject} [${ticket.id}]`,
        text: `Thank you for contacting support. Your request ${ticket.id} is open; replies appear in the console under Support and are mailed to this address.\n\n${request}Your message:\n${ticket.message}\n`,
      }, ticket.id),
    ]);
    return { ...ticket, replies: [] };
  }

  /** The operator's answer: stored with the ticket's new status and mailed to the user. */
  async reply(ticketId: string, body: string, status: SupportTicketStatus): Promise<SupportTicketWithReplies> {
    const now = this.clock.now();
    const ticket = await this.storage.support.reply({ id: newId('rpl', now), ticketId, author: 'operator', body, createdAt: now }, status);
    if (ticket === null) throw new GatewayError('not_found', `No support ticket with id '${ticketId}'.`);
    await this.#send({ to: ticket.email, subject: `Re: ${ticket.subject} [${ticket.id}]`, text: `${body}\n\nStatus: ${status}. The whole conversation is in the console under Support.\n` }, ticket.id);
    return ticket;
  }

  async #send(message: { to: string; subject: string; text: string }, ticketId: string): Promise<void> {
    try {
      await this.mailer.send(message);
    } catch (error) {
      this.logger.warn('support mail could not be sent', { ticket: ticketId, ...describeError(error) });
    }
  }
}
