import type { Announcement } from '../domain/records.js';
import { isoTime } from './time-input.js';

/** An announcement as every API shows it (admin, console and the public list). */
export function announcementJson(item: Announcement): { id: string; title: string; body: string; level: Announcement['level']; published_at: string; expires_at: string | null } {
  return { id: item.id, title: item.title, body: item.body, level: item.level, published_at: new Date(item.publishedAt).toISOString(), expires_at: isoTime(item.expiresAt) };
}
