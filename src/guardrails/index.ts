export * from './detectors.js';
export * from './validators.js';
export * from './masking.js';
export * from './deny-list.js';
export * from './injection.js';
export * from './stream-scanner.js';
export * from './settings.js';
export * from './policy.js';
