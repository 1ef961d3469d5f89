/**
 * Ids the price data lacks. The data matches Anthropic's dated snapshots by prefix, so it does not name them; these
 * are the ones clients send by default (Claude Code among them). A dated id not listed here still resolves through
 * the data's prefix rule.
 */
export const KNOWN_SNAPSHOTS: Readonly<Record<string, readonly string[]>> = {
  'claude-sonnet-4-5': ['claude-sonnet-4-5-20250929'],
  'claude-haiku-4-5': ['claude-haiku-4-5-20251001'],
  'claude-opus-4-5': ['claude-opus-4-5-20251101'],
  'claude-opus-4-1': ['claude-opus-4-1-20250805'],
  'claude-opus-4-0': ['claude-opus-4-20250514'],
  'claude-sonnet-4-0': ['claude-sonnet-4-20250514'],
  'claude-3-7-sonnet-latest': ['claude-3-7-sonnet-20250219'],
  'claude-3-5-haiku-latest': ['claude-3-5-haiku-20241022'],
  'claude-3-5-sonnet': ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-latest'],
  'claude-3-haiku': ['claude-3-haiku-20240307'],
  'claude-3-opus-latest': ['claude-3-opus-20240229'],
  'omni-moderation-latest': ['omni-moderation-2024-09-26', 'text-moderation-latest', 'text-moderation-stable'],
  'gemini-2.5-flash': ['gemini-2.5-flash-preview-05-20'],
  'gemini-2.0-flash': ['gemini-2.0-flash-001'],
  'gemini-2.0-flash-lite': ['gemini-2.0-flash-lite-001'],
};

/** Data ids that are rules rather than model names, and the model name the API knows. */
export const DATA_IDS: Readonly<Record<string, string>> = {
  moderation: 'omni-moderation-latest',
  'computer-use': 'computer-use-preview',
};
