/** The operator pages' shapes, from the server's contract (src/contract/operator.ts and the admin API's builders typed with it). */
import type {
  AdminAccountDetailJson, AdminAccountJson, AdminLedgerPageJson, GuardrailNamesJson, GuardrailPolicyJson, AdminPlanJson, AnnouncementJson, AuditEntryJson, ListPageJson, OperatorRowJson,
  RedemptionCodeJson, TierJson, UserStandingJson, ChannelJson, ChannelFormFieldJson, ChannelTypeJson, ChannelTypeListJson, ChannelHealthJson, ChannelTestResultJson, GatewayHealthJson,
  OperatorOverviewJson, ChannelHealthRowJson, TrafficSummaryJson, AdminModelJson, OperatorUsagePageJson, CatalogEntryJson, CatalogListJson, CatalogImportJson, ModelPricingJson,
} from '../../../src/contract/index.js';

export type OperatorRow = OperatorRowJson;
export type AuditEntry = AuditEntryJson;
export type UserStanding = UserStandingJson;
export type Tier = TierJson;
export type Announcement = AnnouncementJson;
export type RedemptionCode = RedemptionCodeJson;
export type AdminPlan = AdminPlanJson;
export type AdminAccount = AdminAccountJson;
export type AdminAccountDetail = AdminAccountDetailJson;
export type AdminLedgerPage = AdminLedgerPageJson;
export type AdminListPage<T> = ListPageJson<T>;
export type GuardrailPolicy = GuardrailPolicyJson;
/** The policy names bound to a model, account, project or key. */
export type GuardrailNames = GuardrailNamesJson;
export type Channel = ChannelJson;
export type ChannelFormField = ChannelFormFieldJson;
/** A channel type and the form its upstream declares (GET /admin/channel-types). */
export type ChannelType = ChannelTypeJson;
export type ChannelTypeList = ChannelTypeListJson;
export type ChannelHealth = ChannelHealthJson;
export type GatewayHealth = GatewayHealthJson;
export type ChannelTestResult = ChannelTestResultJson;
export type OperatorOverview = OperatorOverviewJson;
export type ChannelHealthRow = ChannelHealthRowJson;
export type TrafficSummary = TrafficSummaryJson;
/** A model as the admin API shows it; the bound guardrails only in a single model's read. */
export type AdminModel = AdminModelJson;
/** A price a model has one figure of (not the long-context tiers or the per-image prices by size). */
export type FlatPrice = Exclude<keyof ModelPricingJson, 'tiers' | 'per_image_by_size'>;
export type CatalogEntry = CatalogEntryJson;
export type CatalogList = CatalogListJson;
export type CatalogImport = CatalogImportJson;
/** A page of the operator's usage explorer: rows with the account's email and the key's and channel's names. */
export type OperatorUsagePage = OperatorUsagePageJson;
