/**
 * Several texts evaluated as one: joined with a separator no detector matches, so a masked text splits back into its
 * parts, and rewrites put back part by part.
 */

/** Joins a request's text parts for one evaluation; no detector matches it, so a masked text splits back apart. */
export const SEPARATOR = '\u0000\n';

/** The parts' texts as one evaluation's subject. */
export function joinTexts(parts: readonly { text: string }[]): string {
  return parts.map((part) => part.text).join(SEPARATOR);
}

/** Puts a masked joined text back into its parts; when a mask swallowed a separator, masks each part on its own. */
export function writeBack(parts: readonly { text: string }[], masked: string, maskOne: (text: string) => string): void {
  const pieces = masked.split(SEPARATOR);
  if (pieces.length === parts.length) {
    parts.forEach((part, index) => {
      part.text = pieces[index] as string;
    });
    return;
  }
  for (const part of parts) part.text = maskOne(part.text);
}

/** Replaces the parts' texts a webhook rewrote (an undefined entry leaves its part as it is). */
export function applyRewrites(parts: readonly { text: string }[], rewrites: readonly (string | undefined)[]): void {
  parts.forEach((part, index) => {
    const text = rewrites[index];
    if (text !== undefined) part.text = text;
  });
}
