/**
 * What zod's `locales` namespace offers in the gateway: English only. Every message the gateway answers with is
 * English, and zod itself loads only English as its default; this module stands in for zod's bundle of every
 * language (64 modules held in memory for nothing). See zod-locales.ts.
 */
export { default as en } from 'zod/v4/locales/en.js';
