/**
 * The console page's Content-Security-Policy: scripts, styles and connections from its own origin only; no inline
 * script or style elements, no eval, no plugins, no framing, no <base> rewriting. Images may be data: URLs (the
 * two-factor QR code is an SVG picture). Trusted Types make string-to-DOM sinks (innerHTML and friends) throw, so
 * text from the API (key names, emails, messages) can only ever land in the page as text.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types none',
].join('; ');

/** Headers on the HTML document. The reset and verification tokens travel in its URL: never send it onwards. */
export const documentHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

/** Headers on every asset. */
export const assetHeaders: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};
