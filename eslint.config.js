import { readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';

const DATABASE_DRIVERS = ['kysely', 'kysely/*', 'pg', 'pg-*', 'node:sqlite'];

/** The top-level folders of src/, each one layer. */
const LAYERS = readdirSync(new URL('./src/', import.meta.url), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);

const folder = (name) => `**/${name}/*`;
/** The services context (services.ts) and the modules that compose the process from every layer (gateway/ its parts). */
const SERVICES = '**/services.js';
const ENTRY = ['**/gateway.js', '**/gateway/*', '**/main.js', '**/cli.js'];
/** The layers that serve requests: the API's HTTP layer, the console's routes and SCIM provisioning. */
const SERVING = ['http', 'console', 'console-billing', 'scim'].map(folder);
/** The endpoints' operations (src/operations): the serving layer runs them; every layer below is called by them. */
const OPERATIONS = [folder('operations')];
/** Everything that serves or composes: no layer below may reach it. */
const TOP = [...SERVING, ...OPERATIONS, SERVICES, '**/app.js', ...ENTRY];
/** Every layer but the named ones (and the composition root above them all). */
const onlyFrom = (self, ...allowed) => [...LAYERS.filter((name) => name !== self && !allowed.includes(name)).map(folder), ...TOP];
const none = (...names) => names.map(folder);

/**
 * Which layers of src/ may not import which: each entry names the folder and the folders (or packages) it must not
 * reach, type imports included. Database drivers are storage's alone everywhere. docs/architecture.md states each
 * rule in its table; `npm run arch:cycles` (part of `npm run lint`) refuses any import cycle through values.
 */
const BOUNDARIES = [
  { folder: 'src/ir', forbidden: ['../*', '../../*'], why: 'The canonical representation depends on nothing.' },
  { folder: 'src/contract', forbidden: ['../*', '../../*'], why: 'The console contract is compiled into the web app too: zod and nothing of the server.' },
  { folder: 'src/shared', forbidden: onlyFrom('shared'), why: 'Shared helpers depend on no layer.' },
  { folder: 'src/domain', forbidden: onlyFrom('domain', 'ir'), why: 'Domain records are plain types: they import only the canonical representation (a channel type is a name checked where channels enter, not the upstream registry).' },
  { folder: 'src/wire', forbidden: onlyFrom('wire', 'ir', 'shared'), why: 'A wire\'s types, mappings and wire objects depend only on the canonical representation and shared helpers; codecs and upstreams import them, never the reverse.' },
  { folder: 'src/tokenize', forbidden: onlyFrom('tokenize', 'ir', 'shared'), why: 'The local tokenizer counts canonical text; it depends on nothing of the request path.' },
  { folder: 'src/redis', forbidden: onlyFrom('redis', 'shared'), why: 'The Redis connection and fleet membership are transports the layers above use; they know none of them.' },
  { folder: 'src/errors', forbidden: onlyFrom('errors', 'shared'), why: 'The error registry depends on no layer.' },
  { folder: 'src/guardrails', forbidden: onlyFrom('guardrails', 'shared', 'ir', 'errors'), why: 'Guardrail detectors and policies are pure: the request path calls them, never the reverse.' },
  { folder: 'src/multipart', forbidden: onlyFrom('multipart', 'errors', 'shared'), why: 'Multipart parsing knows only errors.' },
  { folder: 'src/invalidation', forbidden: onlyFrom('invalidation', 'redis', 'shared'), why: 'The invalidation bus knows only its transports.' },
  { folder: 'src/mail', forbidden: onlyFrom('mail', 'config', 'shared'), why: 'Mailers know only their configuration.' },
  { folder: 'src/file-stores', forbidden: onlyFrom('file-stores', 'config', 'domain', 'shared'), why: 'A file store keeps bytes under ids it is given; which account owns a file is the database\'s to say, before a store is called.' },
  // The webhook outbox's event drafts are written in the same transaction as the fact they tell of.
  { folder: 'src/storage', forbidden: onlyFrom('storage', 'domain', 'shared', 'ir', 'errors', 'config'), why: 'Storage holds domain records; it never loads the upstream registry, the relay or the HTTP layer.' },
  { folder: 'src/metrics', forbidden: [...none('relay', 'codecs', 'upstreams', 'telemetry'), ...TOP], why: 'Prometheus metrics are recorded from above: the listener frame in src/http records the request metrics, handed its route labeller by the root.' },
  { folder: 'src/customers', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'telemetry'), ...TOP], why: 'End-customer rules, their admission and reports are applied by the relay and served by the admin and console routes; they import neither.' },
  { folder: 'src/telemetry', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'storage'), ...TOP], why: 'Telemetry observes requests from below: the composition root hands it what it needs of the HTTP layer (the route labeller).' },
  { folder: 'src/config', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'catalog', 'storage', 'management', 'telemetry'), ...TOP], why: 'Configuration turns the environment into typed settings; it knows no request handling or storage.' },
  { folder: 'src/usage-log', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'billing'), ...TOP], why: 'The usage writer writes rows; it knows no request handling.' },
  { folder: 'src/billing', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'telemetry'), ...TOP], why: 'Billing is money and the ledger; the relay calls it, never the reverse.' },
  { folder: 'src/auth', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...TOP], why: 'Authentication knows keys and storage, not the request path above it.' },
  { folder: 'src/limits', forbidden: [...none('relay', 'upstreams', 'routing'), ...TOP], why: 'Limits count requests; they know nothing of routing or the relay.' },
  { folder: 'src/catalog', forbidden: [...none('relay', 'codecs', 'telemetry'), ...TOP], why: 'The model catalog is data for routing; it knows no request handling.' },
  { folder: 'src/routing', forbidden: [...none('relay', 'codecs', 'telemetry'), ...TOP], why: 'Routing chooses channels; the relay calls it, never the reverse.' },
  { folder: 'src/health', forbidden: [...none('relay', 'codecs', 'upstreams'), ...TOP], why: 'Readiness reads the parts it checks, not the request path.' },
  { folder: 'src/alerts', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...TOP], why: 'Alerts run off the request path.' },
  { folder: 'src/invoices', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'storage'), ...TOP], why: 'Invoice drafts and PDFs are pure; storage numbers them.' },
  { folder: 'src/payments', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...TOP], why: 'Payments credit accounts; the console-billing routes serve them.' },
  { folder: 'src/referrals', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...TOP], why: 'Referrals are rules over storage; the console-billing routes serve them.' },
  { folder: 'src/support', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...TOP], why: 'Support tickets are stored and mailed; the console-billing routes serve them.' },
  { folder: 'src/redemption', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...SERVING, ...OPERATIONS, '**/app.js', ...ENTRY], why: 'Redeeming a code is a step the serving layers call.' },
  { folder: 'src/sign-up-credit', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing'), ...SERVING, ...OPERATIONS, '**/app.js', ...ENTRY], why: 'The sign-up credit is a step the console calls.' },
  { folder: 'src/sso', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'storage', 'telemetry'), ...TOP], why: 'The OpenID Connect client speaks to identity providers; the console\'s routes decide who signs in.' },
  { folder: 'src/webhooks', forbidden: [...none('relay', 'codecs', 'upstreams', 'telemetry'), ...TOP], why: 'Webhooks are told of facts and deliver them off the request path; the serving layers call their management.' },
  { folder: 'src/projects', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'telemetry'), ...TOP], why: 'Projects are rules admission and the management routes apply; they import neither.' },
  { folder: 'src/management', forbidden: [...none('relay', 'codecs', 'telemetry'), ...TOP], why: 'Admin input schemas and record conversions serve the admin API and gateway.yaml; they import neither.' },
  { folder: 'src/upstreams', forbidden: [...none('storage', 'http', 'codecs', 'routing', 'billing', 'telemetry'), ...TOP], why: 'Upstreams speak to providers; they never touch storage, billing, routing or the HTTP layer.' },
  { folder: 'src/codecs', forbidden: [...none('billing', 'upstreams', 'relay', 'routing', 'storage'), ...TOP], why: 'Codecs translate client wires; they know neither billing, upstreams, the relay nor the HTTP layer (families declare their routes as data).' },
  { folder: 'src/batches', forbidden: [...none('console', 'console-billing', 'upstreams'), '**/app.js', ...ENTRY], why: 'The batch runner calls the API\'s routes as a client would (handed to it by the root); it never reaches the console or an upstream directly.' },
  { folder: 'src/guardrail-policies', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'billing', 'telemetry', 'console', 'console-billing'), ...TOP], why: 'Guardrail policies are resolved and applied where the chat operation and the relay call them; they import neither.' },
  { folder: 'src/mcp', forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'console', 'console-billing'), '**/app.js', ...ENTRY], why: 'The MCP gateway serves tools, not models: it never reaches the model request path or the console.' },
  {
    folder: 'src/mcp-tools',
    forbidden: [...none('relay', 'codecs', 'upstreams', 'routing', 'operations', 'console', 'console-billing'), '**/http/routes/*', '**/http/admin/*', '**/app.js', ...ENTRY],
    why: 'The MCP tools offered to models run each model round through the chat route handed to them (in process) and each tool call through src/mcp; they never reach the relay, a codec, an upstream or the route tables.',
  },
  { folder: 'src/realtime', forbidden: [...none('console', 'console-billing'), '**/app.js', ...ENTRY], why: 'Realtime sessions are an operation of their own on the API listener; they never reach the console or the process around them.' },
  { folder: 'src/relay', forbidden: [...SERVING, ...OPERATIONS, '**/app.js', ...ENTRY], why: 'The relay reports answers to the operation that called it and writes them through a ResponseSink; it never settles and never reaches the operations or src/http.' },
  {
    folder: 'src/operations',
    forbidden: [...none('console', 'console-billing'), '**/http/routes/*', '**/http/admin/*', '**/app.js', ...ENTRY],
    why: 'An operation reads its request, admits it and relays it in the metered frame; the HTTP layer\'s route table runs it, never the reverse.',
  },
  { folder: 'src/http', forbidden: [...none('console', 'console-billing'), ...ENTRY], why: 'The API\'s HTTP layer is served by app.ts; it knows nothing of the console or the process around it.' },
  { folder: 'src/console', forbidden: ENTRY, why: 'The console is served by app.ts; it knows nothing of the process around it.' },
  { folder: 'src/scim', forbidden: [...none('relay', 'codecs', 'upstreams'), ...ENTRY], why: 'SCIM provisioning is served by app.ts on the API listener; it knows nothing of the process around it.' },
  { folder: 'src/gateway', forbidden: ['**/gateway.js', '**/main.js', '**/cli.js'], why: 'The parts of the composition root (storage, services, background jobs, listeners) are assembled by gateway.ts; they never reach it or the entry points.' },
  { folder: 'src/console-billing', forbidden: ENTRY, why: 'The console\'s billing routes are served by app.ts; they know nothing of the process around it.' },
];

function restrictedImports(patterns) {
  return ['error', { patterns }];
}

const driverPatterns = [{ group: DATABASE_DRIVERS, message: 'Only src/storage uses the database drivers.' }];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.property.name='only']", message: 'Focused tests skip the rest of the suite.' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/storage/**'], rules: { 'no-restricted-imports': restrictedImports(driverPatterns) } },
  ...BOUNDARIES.map(({ folder, forbidden, why }) => ({
    files: [`${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': restrictedImports([...(folder === 'src/storage' ? [] : driverPatterns), { group: [...new Set(forbidden)], message: why }]) },
  })),
);
