import type { LimitRule } from './rate-limiter.js';

const MINUTE_MS = 60_000;

/** Each record's rules by dimension, kept as long as the record is: a request does not build their ids and objects. */
const rulesOf = new WeakMap<object, Map<string, LimitRule>>();

/**
 * The one-minute rule `<scope>:<owner id>:<suffix>` of `owner` (a key, project, account, subscription or model
 * record) for `dimension`, made again only when its limit changed (an account's limit can change with its tier).
 */
export function minuteRule(owner: { id: string }, scope: string, suffix: string, dimension: string, limit: number): LimitRule {
  let rules = rulesOf.get(owner);
  if (rules === undefined) {
    rules = new Map();
    rulesOf.set(owner, rules);
  }
  const known = rules.get(dimension);
  if (known !== undefined && known.limit === limit) return known;
  const made = { id: `${scope}:${owner.id}:${suffix}`, dimension, limit, windowMs: MINUTE_MS };
  rules.set(dimension, made);
  return made;
}
