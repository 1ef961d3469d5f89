/**
 * What a guardrail policy gets for the settings it leaves out, apart from their schemas: the request path reads
 * these without loading the validation library the admin API checks policies with.
 */

/** The moderation model asked when a policy names none (OpenAI's default; a public model id of the catalog). */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** How long an external guardrail is waited for when its policy does not say. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 3000;
