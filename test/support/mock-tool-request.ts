/**
 * Rules the mock upstreams share: a last user text with `call <name>` calls that tool, or else the one whose name
 * ends with `<name>` (a gateway may rename grouped tools, e.g. `group__name`, keeping the tool's own name last).
 * Agents put long texts of their own around the prompt, so every `call <word>` is tried until one names a tool.
 */
export function requestedToolName(text: string, names: readonly string[]): string | undefined {
  for (const match of text.matchAll(/\bcall ([A-Za-z0-9_.:-]+)/gi)) {
    const word = match[1] as string;
    const name = names.find((candidate) => candidate === word) ?? names.find((candidate) => candidate.endsWith(word));
    if (name !== undefined) return name;
  }
  return undefined;
}

/** The arguments a prompt gives its call, as `call <name> with {…JSON object…}`; undefined when there are none. */
export function requestedToolArguments(text: string, name: string): Record<string, unknown> | undefined {
  const at = text.search(new RegExp(`\\bcall ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} with \\{`, 'i'));
  if (at < 0) return undefined;
  const start = text.indexOf('{', at);
  for (let end = text.indexOf('}', start); end >= 0; end = text.indexOf('}', end + 1)) {
    try {
      const parsed = JSON.parse(text.slice(start, end + 1)) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not the closing brace yet.
    }
  }
  return undefined;
}
