/**
 * What the console's channel form asks for a channel type, as data its upstream declares: how the credential is
 * given, whether a base URL is needed, and the type's own settings. A new upstream brings its form with it.
 */

/** One setting of a channel type: `settings.<name>`. */
export interface ChannelFormField {
  readonly name: string;
  readonly label: string;
  readonly input: 'text' | 'number' | 'boolean' | 'select';
  readonly required?: boolean;
  /** The choices of a `select`. */
  readonly options?: readonly string[];
  readonly placeholder?: string;
  readonly hint?: string;
}

export interface ChannelForm {
  /** `key`: one or several API keys; `optional-key`: a local server that may have none; `json`: a JSON document per key. */
  readonly credential: 'key' | 'optional-key' | 'json';
  readonly credentialHint?: string;
  readonly baseUrl: 'required' | 'optional';
  readonly baseUrlHint?: string;
  /** What the upstream name of a model is on this type (an Azure deployment, a Bedrock model id …). */
  readonly upstreamModelHint?: string;
  readonly settings: readonly ChannelFormField[];
}

/** The form of a type whose upstream declares none: an API key and the vendor's default address. */
export const DEFAULT_CHANNEL_FORM: ChannelForm = { credential: 'key', baseUrl: 'optional', settings: [] };

/** Settings every channel type takes (timeouts and the connection bound), shown after the type's own. */
export const COMMON_CHANNEL_SETTINGS: readonly ChannelFormField[] = [
  { name: 'first_byte_timeout_ms', label: 'First-byte timeout (ms)', input: 'number', placeholder: '120000 streams, 600000 otherwise', hint: 'Longest wait for the response head.' },
  { name: 'idle_timeout_ms', label: 'Idle timeout (ms)', input: 'number', placeholder: '120000', hint: 'Longest silence between two body chunks.' },
  { name: 'max_connections', label: 'Most connections', input: 'number', placeholder: '10000', hint: 'Connections one process opens to this origin.' },
];
