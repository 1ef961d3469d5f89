import type { Kysely } from 'kysely';
import type { SupportReply, SupportTicket, SupportTicketStatus } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { pageLimit, toPage } from '../pagination.js';
import type { Page, PageRequest } from '../../domain/records.js';
import { toSupportReply, toSupportTicket } from './commerce-rows.js';

export interface SupportTicketWithReplies extends SupportTicket {
  replies: SupportReply[];
}

export interface SupportRepository {
  create(ticket: SupportTicket): Promise<void>;
  get(id: string): Promise<SupportTicketWithReplies | null>;
  /** Newest first; `after` is the id of the last ticket of the previous page; `userId` keeps only that user's. */
  listByAccount(accountId: string, userId: string | null, page: PageRequest): Promise<Page<SupportTicketWithReplies>>;
  /** Every account's tickets (the operator's queue), optionally of one status, newest first. */
  list(status: SupportTicketStatus | null, page: PageRequest): Promise<Page<SupportTicket>>;
  /** Adds the reply and sets the ticket's status in one transaction; null when there is no such ticket. */
  reply(reply: SupportReply, status: SupportTicketStatus): Promise<SupportTicketWithReplies | null>;
}

export function createSupportRepository(db: Kysely<CommerceDatabase>): SupportRepository {
  const withReplies = async (tickets: SupportTicket[]): Promise<SupportTicketWithReplies[]> => {
    if (tickets.length === 0) return [];
    const rows = await db.selectFrom('support_replies').selectAll().where('ticket_id', 'in', tickets.map((ticket) => ticket.id)).orderBy('created_at').orderBy('id').execute();
    const byTicket = new Map<string, SupportReply[]>();
    for (const row of rows) {
      const list = byTicket.get(row.ticket_id) ?? [];
      list.push(toSupportReply(row));
      byTicket.set(row.ticket_id, list);
    }
    return tickets.map((ticket) => ({ ...ticket, replies: byTicket.get(ticket.id) ?? [] }));
  };
  const get = async (id: string): Promise<SupportTicketWithReplies | null> => {
    const row = await db.selectFrom('support_tickets').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined) return null;
    const [ticket] = await withReplies([toSupportTicket(row)]);
    return ticket ?? null;
  };

  return {
    async create(ticket) {
      await db.insertInto('support_tickets').values({
        id: ticket.id,
        account_id: ticket.accountId,
        user_id: ticket.userId,
        email: ticket.email,
        subject: ticket.subject,
        category: ticket.category,
        message: ticket.message,
        request_id: ticket.requestId,
        status: ticket.status,
        created_at: ticket.createdAt,
        updated_at: ticket.updatedAt,
      }).execute();
    },

    get,

    async listByAccount(accountId, userId, page) {
      const limit = pageLimit(page);
      let query = db.selectFrom('support_tickets').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit + 1);
      if (userId !== null) query = query.where('user_id', '=', userId);
      if (page.after != null) query = query.where('id', '<', page.after);
      const rows = await query.execute();
      const tickets = toPage(rows.map(toSupportTicket), limit, (ticket) => ticket.id);
      return { data: await withReplies(tickets.data), nextCursor: tickets.nextCursor };
    },

    async list(status, page) {
      const limit = pageLimit(page);
      let query = db.selectFrom('support_tickets').selectAll().orderBy('id', 'desc').limit(limit + 1);
      if (status !== null) query = query.where('status', '=', status);
      if (page.after != null) query = query.where('id', '<', page.after);
      const rows = await query.execute();
      return toPage(rows.map(toSupportTicket), limit, (ticket) => ticket.id);
    },

    async reply(reply, status) {
      const updated = await db.transaction().execute(async (trx) => {
        const ticket = await trx.updateTable('support_tickets').set({ status, updated_at: reply.createdAt }).where('id', '=', reply.ticketId).returning('id').executeTakeFirst();
        if (ticket === undefined) return false;
        await trx.insertInto('support_replies').values({ id: reply.id, ticket_id: reply.ticketId, author: reply.author, body: reply.body, created_at: reply.createdAt }).execute();
        return true;
      });
      return updated ? get(reply.ticketId) : null;
    },
  };
}
