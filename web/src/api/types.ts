/**
 * The console API's shapes (docs/console-api.md). Those the server declares in its contract (src/contract, zod
 * schemas its JSON builders are typed with) are taken from there, so a field renamed on the server fails this build.
 */
import type {
  ApiKeyJson, BatchQueueFiguresJson, ConsoleAccountJson, ConsoleBatchJson, ConsoleBatchListJson, ConsoleModelJson, ConsoleConfigJson, ConsoleSessionJson, ConsoleUsageRowJson,
  ConsoleUserJson, DailyUsageJson, ConsoleProjectJson, KeyInputJson, ListPageJson, OperatorStandingJson, OverviewJson, ProjectInputJson, ProjectMemberJson,
  OfferedGuardrailJson, OfferedMcpServerJson, PlaygroundSummaryJson, SessionRowJson, SignedInJson, SignInResultJson, SignUpCreditJson,
} from '../../../src/contract/index.js';

export type User = ConsoleUserJson;

/** The sign-up credit as its owner sees it (null: none given and none to come). */
export type SignUpCredit = SignUpCreditJson;

export type Account = ConsoleAccountJson;

export type OperatorRole = OperatorStandingJson['role'];
export type OperatorPermission = OperatorStandingJson['permissions'][number];

/** The signed-in user's standing as an operator of the whole gateway (null in the session for everyone else). */
export type OperatorStanding = OperatorStandingJson;

export type Session = ConsoleSessionJson;

export type ConsoleConfig = ConsoleConfigJson;

export type SignInResult = SignInResultJson;

/** A new session: after sign-up, sign-in and accepting an invitation. */
export type SignedIn = SignedInJson;

export type SessionRow = SessionRowJson;

export type KeyStatus = ApiKeyJson['status'];
export type BudgetPeriod = KeyBudget['period'];

/** What a key may spend in each UTC day, week (from Monday) or month; `spent_usd` is this period's. */
export type KeyBudget = NonNullable<ApiKeyJson['budget']>;

export type ApiKey = ApiKeyJson;

/** A project of the account: a group of keys with its own budget, limits, allowlist and members. */
export type Project = ConsoleProjectJson;

export type ProjectRole = ProjectMemberJson['role'];

export type ProjectMember = ProjectMemberJson;

/** A project's attributes on create and edit; null clears one. */
export type ProjectInput = ProjectInputJson;

/** The attributes a key is created or edited with; null clears an attribute on edit. */
export type KeyInput = KeyInputJson;

/** A guardrail policy the operator lets accounts attach to their keys (GET /api/guardrails). */
export type OfferedGuardrail = OfferedGuardrailJson;

/** An MCP server the account's keys may name (GET /api/mcp-servers). */
export type OfferedMcpServer = OfferedMcpServerJson;

/** A model the console lists, with the account's keys that may call it (roles that read keys). */
export type CatalogModel = ConsoleModelJson;

export type Overview = OverviewJson;

export type UsageRow = ConsoleUsageRowJson;

export type DailyUsage = DailyUsageJson;

export type Page<T> = ListPageJson<T>;

/** What one playground answer took, and the body the console sent to the gateway for it (no key). */
export type PlaygroundSummary = PlaygroundSummaryJson;

/** One batch job of the account, as the batches page shows it. */
export type ConsoleBatch = ConsoleBatchJson;
export type ConsoleBatchList = ConsoleBatchListJson;
/** The batch queue over every instance (operators). */
export type BatchQueueFigures = BatchQueueFiguresJson;
