import type { MatchLogic } from '@pydantic/genai-prices';

/** Whether a model id satisfies the data's match rule (case-insensitive, as the data's own matcher). */
export function matches(rule: MatchLogic, id: string): boolean {
  if ('or' in rule) return rule.or.some((inner) => matches(inner, id));
  if ('and' in rule) return rule.and.every((inner) => matches(inner, id));
  const lower = id.toLowerCase();
  if ('equals' in rule) return lower === rule.equals.toLowerCase();
  if ('starts_with' in rule) return lower.startsWith(rule.starts_with.toLowerCase());
  if ('ends_with' in rule) return lower.endsWith(rule.ends_with.toLowerCase());
  if ('contains' in rule) return lower.includes(rule.contains.toLowerCase());
  return new RegExp(rule.regex).test(id);
}

/** The ids a rule names exactly (`equals`), in order: the aliases the data knows by name. */
export function exactIds(rule: MatchLogic): string[] {
  if ('or' in rule) return rule.or.flatMap(exactIds);
  if ('equals' in rule) return [rule.equals];
  return [];
}
