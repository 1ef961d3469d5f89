export type * from './chat-request.js';
export type * from './chat-response.js';
export type * from './embedding.js';
export type * from './finish-reason.js';
export type * from './message.js';
export type * from './stream-part.js';
export type * from './token-count.js';
export type * from './usage.js';
export { emptyUsage, totalTokens } from './usage.js';
