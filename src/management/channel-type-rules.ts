import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelType } from '../domain/records.js';
import { bedrockCredentials } from '../upstreams/bedrock/bedrock-credentials.js';
import { RERANK_APIS } from '../upstreams/openai/openai-adapter.js';
import { channelFormOf } from '../upstreams/upstreams.js';
import { serviceAccountOf } from '../upstreams/vertex-ai/service-account.js';

/** Channel types whose keys are JSON documents (never split on commas or newlines): their form's credential is `json`. */
export function takesStructuredKeys(type: ChannelType): boolean {
  return channelFormOf(type).credential === 'json';
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

function badSetting(name: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param: `settings.${name}` });
}

function checkBedrock(apiKeys: readonly string[], settings: Record<string, unknown>): void {
  for (const key of apiKeys) bedrockCredentials(key);
  if (typeof settings.region !== 'string' || !REGION.test(settings.region)) {
    throw badSetting('region', "A bedrock channel needs 'settings.region', an AWS region such as 'us-east-1'.");
  }
  const profile = settings.inference_profile;
  if (profile !== undefined && (typeof profile !== 'string' || !/^(none|auto|[a-z]{2,5}(-gov)?)$/.test(profile))) {
    throw badSetting('inference_profile', "'settings.inference_profile' is 'auto', 'none' or a geography prefix such as 'us', 'eu', 'apac' or 'global'.");
  }
  for (const name of ['guardrail_identifier', 'guardrail_version']) {
    if (settings[name] !== undefined && (typeof settings[name] !== 'string' || settings[name] === '')) throw badSetting(name, `'settings.${name}' must be a non-empty string.`);
  }
  checkRerankUrl(settings, 'https://bedrock-agent-runtime.us-east-1.amazonaws.com');
}

/** `settings.rerank_base_url`, where reranks go when not to the channel's base URL: a plain http(s) URL. */
function checkRerankUrl(settings: Record<string, unknown>, example: string): void {
  const rerankUrl = settings.rerank_base_url;
  if (rerankUrl !== undefined && !isPlainHttpUrl(rerankUrl)) {
    throw badSetting('rerank_base_url', `'settings.rerank_base_url' must be an http(s) URL without credentials, such as '${example}'.`);
  }
}

function checkOpenAICompatible(settings: Record<string, unknown>): void {
  const api = settings.rerank_api;
  if (api !== undefined && !(RERANK_APIS as readonly unknown[]).includes(api)) {
    throw badSetting('rerank_api', `'settings.rerank_api' is one of ${RERANK_APIS.map((name) => `'${name}'`).join(', ')}.`);
  }
  checkRerankUrl(settings, 'http://tei:8080');
}

/** An http(s) URL with no user name or password in it. */
function isPlainHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
}

function checkVertex(apiKeys: readonly string[], settings: Record<string, unknown>): void {
  const accounts = apiKeys.map(serviceAccountOf);
  const project = settings.project_id;
  if (project !== undefined && (typeof project !== 'string' || !/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/.test(project))) {
    throw badSetting('project_id', "'settings.project_id' must be a Google Cloud project id.");
  }
  if (project === undefined && accounts.some((account) => account.projectId === null)) {
    throw badSetting('project_id', "A vertex-ai channel needs 'settings.project_id' when its service-account key names no project_id.");
  }
  const location = settings.location;
  if (location !== undefined && (typeof location !== 'string' || !/^(global|[a-z]+-[a-z]+\d+)$/.test(location))) {
    throw badSetting('location', "'settings.location' must be 'global' or a Google Cloud region such as 'us-east5'.");
  }
  checkRerankUrl(settings, 'https://discoveryengine.googleapis.com');
}

/**
 * Type-specific rules the schema cannot say alone: the key, the base URL and the required settings as the type's form
 * declares them (`upstreams/<name>/index.ts`; a local server's key is optional, and one given is still sent), and the
 * settings a few types check further.
 */
export function checkChannel(type: ChannelType, baseUrl: string | null, apiKeys: string[], settings: Record<string, unknown>): void {
  const form = channelFormOf(type);
  if (form.credential !== 'optional-key' && apiKeys.length === 0) throw new GatewayError('bad_request', `A ${type} channel needs 'api_key'.`, { param: 'api_key' });
  if (form.baseUrl === 'required' && baseUrl === null) {
    throw new GatewayError('bad_request', `A ${type} channel needs 'base_url'.`, { param: 'base_url' });
  }
  if (type === 'bedrock') checkBedrock(apiKeys, settings);
  if (type === 'vertex-ai') checkVertex(apiKeys, settings);
  if (type === 'openai-compatible') checkOpenAICompatible(settings);
  // What the form marks required, after the type's own checks (which name the setting's form more precisely).
  for (const field of form.settings) {
    if (field.required === true && (settings[field.name] === undefined || settings[field.name] === null || settings[field.name] === '')) {
      throw badSetting(field.name, `A ${type} channel needs 'settings.${field.name}'.`);
    }
  }
}
