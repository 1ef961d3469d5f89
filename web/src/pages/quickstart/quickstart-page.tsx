import { useState } from 'react';
import { Link } from 'react-router-dom';
import * as Tabs from '@radix-ui/react-tabs';
import { useConsoleConfig, useSession } from '../../api/api-context';
import { useDocumentTitle } from '../../layout/use-document-title';
import { CopyButton } from '../../ui/copy-button';
import { errorMessage } from '../../api/client';
import { Alert, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField } from '../../ui/field';
import { useKeys, useModels } from '../keys/key-queries';
import { agentSnippets, familySnippets, type Language } from './snippets';

function CodeBlock({ code, label, testId }: { code: string; label: string; testId?: string }) {
  return (
    <div className="code-block">
      <pre tabIndex={0} aria-label={label} data-testid={testId}><code>{code}</code></pre>
      <div className="code-actions"><CopyButton text={code} label="Copy code" /></div>
    </div>
  );
}

const LANGUAGES: { id: Language; label: string }[] = [{ id: 'curl', label: 'curl' }, { id: 'python', label: 'Python' }, { id: 'node', label: 'Node' }];

/** The shell line that puts the chosen key in UNIGATE_API_KEY; the secret itself was shown once, so its hint stands in. */
function keyLine(hint: string | null, name: string | null): string {
  if (hint === null) return 'export UNIGATE_API_KEY="paste-your-key-here"\n';
  return `# the full secret of the key "${name ?? ''}" (it starts and ends like ${hint}), shown once when it was made\nexport UNIGATE_API_KEY="${hint}"\n`;
}

export function QuickstartPage() {
  useDocumentTitle('Quickstart');
  const config = useConsoleConfig();
  const session = useSession();
  const readsKeys = session.data?.role !== 'billing';
  const models = useModels();
  const keys = useKeys(readsKeys);
  const [keyId, setKeyId] = useState('');
  const [modelId, setModelId] = useState('');
  if (config.data === undefined) return <Loading />;
  const base = config.data.api_base_url;
  const usable = (keys.data?.data ?? []).filter((key) => key.status !== 'revoked' && key.status !== 'expired');
  const key = usable.find((candidate) => candidate.id === keyId) ?? usable[0] ?? null;
  // The models the chosen key may call (all when it has no allowlist).
  const chat = (models.data?.data ?? []).filter((model) => model.kind === 'chat' && (key === null || key.allowed_models === null || key.allowed_models.includes(model.id)));
  const model = chat.find((candidate) => candidate.id === modelId)?.id ?? chat[0]?.id ?? 'MODEL_ID';
  const families = familySnippets(base, model);
  const agents = agentSnippets(base, model);
  return (
    <div className="page stack">
      <PageHeader title="Quickstart" description="One base URL and one key for every model, in whichever language, SDK or coding agent you already use." />
      <Card title="Your settings">
        <div className="secret-row">
          <code className="secret" data-testid="base-url">{base}</code>
          <CopyButton text={base} label="Copy base URL" />
        </div>
        {keys.isError || models.isError ? <Alert tone="error">{errorMessage(keys.isError ? keys.error : models.error)}</Alert> : null}
        <p className="field-hint">OpenAI SDKs and OpenAI-compatible tools take <code>{base}/v1</code>; Anthropic and Google SDKs take the base URL as it is.</p>
        <div className="form-grid">
          {readsKeys ? (
            <SelectField
              label="Key"
              value={key?.id ?? ''}
              onChange={(event) => setKeyId(event.target.value)}
              options={usable.length === 0 ? [{ value: '', label: keys.isPending ? 'Loading keys…' : keys.isError ? 'Keys could not be loaded' : 'No key yet' }] : usable.map((candidate) => ({ value: candidate.id, label: `${candidate.name} (${candidate.hint})` }))}
              hint={usable.length > 0 ? 'The examples use the models this key may call.' : keys.isSuccess ? <>Make one on the <Link to="/keys">API keys</Link> page; its secret is shown once.</> : undefined}
            />
          ) : null}
          <SelectField label="Model" value={model} onChange={(event) => setModelId(event.target.value)} options={chat.length === 0 ? [{ value: 'MODEL_ID', label: models.isPending ? 'Loading models…' : models.isError ? 'Models could not be loaded' : 'No chat model' }] : chat.map((candidate) => ({ value: candidate.id, label: candidate.id }))} hint={<>Prices on the <Link to="/models">Models</Link> page.</>} />
        </div>
        <CodeBlock label="Shell: the key as an environment variable" code={keyLine(key?.hint ?? null, key?.name ?? null)} testId="key-line" />
      </Card>
      <Card title="Call a model">
        <Tabs.Root defaultValue="curl" className="tabs">
          <Tabs.List className="tab-list" aria-label="Language">
            {LANGUAGES.map((language) => <Tabs.Trigger key={language.id} value={language.id} className="tab">{language.label}</Tabs.Trigger>)}
          </Tabs.List>
          {LANGUAGES.map((language) => (
            <Tabs.Content key={language.id} value={language.id} className="tab-panel stack">
              {families.map((family) => (
                <section key={family.id} className="stack snippet-family" aria-label={`${family.family} in ${language.label}`}>
                  <h3>{family.family}</h3>
                  {family.install[language.id] === null ? null : <CodeBlock label={`Install for ${family.id} in ${language.label}`} code={`${family.install[language.id] ?? ''}\n`} />}
                  <CodeBlock label={`${family.id} example in ${language.label}`} code={family.code[language.id]} testId={`snippet-${family.id}-${language.id}`} />
                </section>
              ))}
            </Tabs.Content>
          ))}
        </Tabs.Root>
      </Card>
      <Card title="Coding agents">
        <Tabs.Root defaultValue="claude-code" className="tabs">
          <Tabs.List className="tab-list" aria-label="Coding agent">
            {agents.map((agent) => <Tabs.Trigger key={agent.id} value={agent.id} className="tab">{agent.name}</Tabs.Trigger>)}
          </Tabs.List>
          {agents.map((agent) => (
            <Tabs.Content key={agent.id} value={agent.id} className="tab-panel stack">
              <p className="field-hint">{agent.where}</p>
              <CodeBlock label={`${agent.name} settings`} code={agent.code} testId={`agent-${agent.id}`} />
            </Tabs.Content>
          ))}
        </Tabs.Root>
      </Card>
    </div>
  );
}
