export * from './common.js';
export * from './account.js';
export * from './keys.js';
export * from './usage.js';
export * from './billing.js';
export * from './members.js';
export * from './models.js';
export * from './batches.js';
