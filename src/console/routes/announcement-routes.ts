import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { announcementJson } from '../../management/announcement-json.js';
import type { ConsoleDeps } from '../console-deps.js';
import { sendNoContent } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';
import type { ConsoleAnnouncementListJson } from '../../contract/operator.js';

/** Announcements the console lists at most (the public API's number). */
const MAX_SHOWN = 50;

/**
 * The operator's announcements in the console: the active ones, newest first, each saying whether the signed-in
 * person dismissed it (the banner shows the newest one not dismissed). Dismissing is per person, on every device.
 */
export const ANNOUNCEMENT_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;
  return { deps, storage, clock };
}, [
  { method: 'GET', path: '/api/announcements', who: 'member', permission: null, handler: ({ storage, clock }) => async ({ context, active }) => {
    const announcements = await storage.announcements.listActive(clock.now(), MAX_SHOWN);
    const dismissed = await storage.announcements.dismissedBy(active.user.id, announcements.map((item) => item.id));
    const answer: ConsoleAnnouncementListJson = {
      object: 'list',
      data: announcements.map((item) => ({ ...announcementJson(item), dismissed: dismissed.has(item.id) })),
    };
    sendJson(context, 200, answer);
  } },

  { method: 'POST', path: '/api/announcements/:id/dismiss', who: 'member', permission: null, handler: ({ storage, clock }) => async ({ context, active }) => {
    const id = context.params.id ?? '';
    const now = clock.now();
    // Only an announcement the person can see now; anything else is unknown to them.
    const shown = (await storage.announcements.listActive(now, MAX_SHOWN)).some((item) => item.id === id);
    if (!shown) throw new GatewayError('not_found', `No announcement with id '${id}'.`);
    await storage.announcements.dismiss(active.user.id, id, now);
    sendNoContent(context);
  } },
]);
