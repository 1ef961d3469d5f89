import type { AnnouncementJson } from '../contract/operator.js';
import type { Announcement } from '../domain/records.js';
import { isoTime } from './iso-time.js';

/** An announcement as every API shows it (admin, console and the public list). */
export function announcementJson(item: Announcement): AnnouncementJson {
  return { id: item.id, title: item.title, body: item.body, level: item.level, published_at: new Date(item.publishedAt).toISOString(), expires_at: isoTime(item.expiresAt) };
}
