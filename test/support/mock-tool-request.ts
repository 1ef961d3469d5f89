/**
 * A rule the mock upstreams share: a last user text with `call <name>` calls that tool, or else the one whose name
 * ends with `<name>` (a gateway may rename grouped tools, e.g. `group__name`, keeping the tool's own name last).
 */
export function requestedToolName(text: string, names: readonly string[]): string | undefined {
  const word = /\bcall ([A-Za-z0-9_.:-]+)/i.exec(text)?.[1];
  if (word === undefined) return undefined;
  return names.find((name) => name === word) ?? names.find((name) => name.endsWith(word));
}
