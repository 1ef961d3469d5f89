import type { Channel } from '../../domain/records.js';

export type ConverseOperation = 'converse' | 'converse-stream';

/** Geography prefixes of cross-region inference profiles (`us.anthropic.claude-…`). */
const PROFILE_PREFIXES = ['us', 'eu', 'apac', 'us-gov', 'global', 'jp', 'au', 'ca'] as const;
export type InferenceProfile = (typeof PROFILE_PREFIXES)[number];

export function bedrockRegion(channel: Channel): string {
  const region = channel.settings.region;
  return typeof region === 'string' && region !== '' ? region : 'us-east-1';
}

/** The geography whose cross-region profiles a region belongs to (`auto`), or null for regions without one. */
export function profileForRegion(region: string): InferenceProfile | null {
  if (region.startsWith('us-gov-')) return 'us-gov';
  if (region.startsWith('us-')) return 'us';
  if (region.startsWith('eu-')) return 'eu';
  if (region.startsWith('ap-')) return 'apac';
  return null;
}

/**
 * The model id sent to Bedrock. With `settings.inference_profile` (`us`, `eu`, `apac`, `us-gov`, `global`, … or `auto`
 * for the channel region's geography) a bare foundation-model id becomes that cross-region inference profile
 * (`anthropic.claude-…` → `us.anthropic.claude-…`); ids that already name a profile, and ARNs, stay as they are.
 */
export function bedrockModelId(channel: Channel, upstreamModel: string): string {
  const setting = channel.settings.inference_profile;
  if (typeof setting !== 'string' || setting === '' || setting === 'none' || upstreamModel.startsWith('arn:')) return upstreamModel;
  const first = upstreamModel.split('.')[0] ?? '';
  if ((PROFILE_PREFIXES as readonly string[]).includes(first)) return upstreamModel;
  const prefix = setting === 'auto' ? profileForRegion(bedrockRegion(channel)) : setting;
  return prefix === null ? upstreamModel : `${prefix}.${upstreamModel}`;
}

/** `{base}/model/{modelId}/converse[-stream]`; the base is `channel.baseUrl` or the region's Bedrock runtime endpoint. */
export function bedrockUrl(channel: Channel, upstreamModel: string, operation: ConverseOperation): string {
  const base = (channel.baseUrl ?? `https://bedrock-runtime.${bedrockRegion(channel)}.amazonaws.com`).replace(/\/+$/, '');
  return `${base}/model/${encodeURIComponent(bedrockModelId(channel, upstreamModel))}/${operation}`;
}
