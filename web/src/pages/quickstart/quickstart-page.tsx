import * as Tabs from '@radix-ui/react-tabs';
import { useConsoleConfig } from '../../api/api-context';
import { useDocumentTitle } from '../../layout/use-document-title';
import { CopyButton } from '../../ui/copy-button';
import { Card, Loading, PageHeader } from '../../ui/feedback';
import { useModels } from '../keys/key-queries';
import { snippetsFor } from './snippets';

function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="code-block">
      <pre tabIndex={0} aria-label={label}><code>{code}</code></pre>
      <div className="code-actions"><CopyButton text={code} label="Copy code" /></div>
    </div>
  );
}

export function QuickstartPage() {
  useDocumentTitle('Quickstart');
  const config = useConsoleConfig();
  const models = useModels();
  if (config.data === undefined) return <Loading />;
  const base = config.data.api_base_url;
  const model = models.data?.data.find((entry) => entry.kind === 'chat')?.id ?? 'MODEL_ID';
  const snippets = snippetsFor(base, model);
  return (
    <div className="page stack">
      <PageHeader title="Quickstart" description="One base URL and one key for every model, in whichever SDK you already use." />
      <Card title="Base URL">
        <div className="secret-row">
          <code className="secret" data-testid="base-url">{base}</code>
          <CopyButton text={base} label="Copy base URL" />
        </div>
        <p className="field-hint">OpenAI SDKs take <code>{base}/v1</code>; Anthropic and Google SDKs take the base URL as it is.</p>
        <CodeBlock label="Shell: the key as an environment variable" code={'export UNIGATE_API_KEY="paste-your-key-here"\n'} />
      </Card>
      <Card>
        <Tabs.Root defaultValue="openai" className="tabs">
          <Tabs.List className="tab-list" aria-label="SDK">
            {snippets.map((snippet) => <Tabs.Trigger key={snippet.id} value={snippet.id} className="tab">{snippet.sdk}</Tabs.Trigger>)}
          </Tabs.List>
          {snippets.map((snippet) => (
            <Tabs.Content key={snippet.id} value={snippet.id} className="tab-panel stack">
              <p>{snippet.family}</p>
              <CodeBlock label={`Install ${snippet.sdk}`} code={`${snippet.install}\n`} />
              <CodeBlock label={`Example with ${snippet.sdk}`} code={snippet.code} />
            </Tabs.Content>
          ))}
        </Tabs.Root>
      </Card>
    </div>
  );
}
