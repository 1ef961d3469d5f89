import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { useApi, useConsoleConfig } from '../../api/api-context';
import { errorMessage, type ApiClient } from '../../api/client';
import type { PlaygroundSummary } from '../../api/types';
import { formatCost, formatInteger, formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { CopyButton } from '../../ui/copy-button';
import { Alert, Card, PageHeader } from '../../ui/feedback';
import { FieldFrame, SelectField, TextField } from '../../ui/field';
import { useModels } from '../keys/key-queries';
import { shellWord } from '../quickstart/snippets';
import { readChatStream } from './read-chat-stream';

interface Turn {
  role: 'user' | 'assistant';
  content: string;
  summary?: PlaygroundSummary;
  error?: string;
}

interface Settings {
  system: string;
  temperature: string;
  maxTokens: string;
  stream: boolean;
}

function SummaryLine({ summary }: { summary: PlaygroundSummary }) {
  return (
    <p className="turn-summary" data-testid="answer-summary">
      {formatInteger(summary.input_tokens)} in · {formatInteger(summary.output_tokens)} out · {formatCost(summary.cost_usd)} · {formatMilliseconds(summary.latency_ms)}
      {summary.first_token_ms == null ? null : <> (first token {formatMilliseconds(summary.first_token_ms)})</>}
    </p>
  );
}

/** The call the console made, as curl with the caller's own key from UNIGATE_API_KEY. */
export function curlOf(apiBaseUrl: string, body: Record<string, unknown>): string {
  return `curl ${shellWord(`${apiBaseUrl}/v1/chat/completions`)} \\\n  -H "Authorization: Bearer $UNIGATE_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d ${shellWord(JSON.stringify(body))}\n`;
}

function requestOf(model: string, history: Turn[], settings: Settings): Record<string, unknown> {
  const temperature = settings.temperature === '' ? undefined : Number(settings.temperature);
  const maxTokens = settings.maxTokens === '' ? undefined : Number(settings.maxTokens);
  return {
    model,
    messages: [
      ...(settings.system.trim() === '' ? [] : [{ role: 'system', content: settings.system }]),
      ...history.map((turn) => ({ role: turn.role, content: turn.content })),
    ],
    ...(temperature === undefined || !Number.isFinite(temperature) ? {} : { temperature }),
    ...(maxTokens === undefined || !Number.isInteger(maxTokens) ? {} : { max_tokens: maxTokens }),
    stream: settings.stream,
  };
}

/** One model's side of the conversation: its own history, streamed or whole answers, a Stop of its own. */
function useChatColumn(api: ApiClient) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);

  const send = async (model: string, text: string, settings: Settings): Promise<void> => {
    const history: Turn[] = [...turns, { role: 'user', content: text }];
    setTurns([...history, { role: 'assistant', content: '' }]);
    setBusy(true);
    const controller = new AbortController();
    abort.current = controller;
    const update = (change: (turn: Turn) => Turn) => setTurns((current) => [...current.slice(0, -1), change(current[current.length - 1] as Turn)]);
    try {
      const response = await api.stream('/api/playground/chat', requestOf(model, history, settings), controller.signal);
      if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
        const answer = (await response.json()) as { completion: { choices?: Array<{ message?: { content?: string | null } }> }; summary: PlaygroundSummary };
        update((turn) => ({ ...turn, content: answer.completion.choices?.[0]?.message?.content ?? '', summary: answer.summary }));
      } else {
        if (response.body === null) throw new Error('empty answer');
        for await (const part of readChatStream(response.body)) {
          if (part.kind === 'delta') update((turn) => ({ ...turn, content: turn.content + part.text }));
          else if (part.kind === 'summary') update((turn) => ({ ...turn, summary: part.summary }));
          else update((turn) => ({ ...turn, error: part.message }));
        }
      }
    } catch (thrown) {
      update((turn) => ({ ...turn, error: errorMessage(thrown) }));
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };
  return { turns, busy, send, stop: () => abort.current?.abort(), clear: () => setTurns([]) };
}

type Column = ReturnType<typeof useChatColumn>;

function ChatLog({ column, model, apiBaseUrl, testId }: { column: Column; model: string; apiBaseUrl: string; testId: string }) {
  const lastSummary = [...column.turns].reverse().find((turn) => turn.summary?.request_body !== undefined)?.summary;
  return (
    <section className="chat-column" aria-label={`Answers of ${model}`}>
      <h2 className="chat-column-title mono">{model}</h2>
      <ol className="chat-log" aria-live="polite" aria-busy={column.busy} data-testid={testId}>
        {column.turns.length === 0 ? <li className="empty">Say something to start.</li> : null}
        {column.turns.map((turn, index) => (
          <li key={index} className={`turn turn-${turn.role}`}>
            <span className="turn-role">{turn.role === 'user' ? 'You' : model}</span>
            <p className="turn-text">{turn.content}{turn.role === 'assistant' && column.busy && index === column.turns.length - 1 ? <span className="cursor" aria-hidden="true">▍</span> : null}</p>
            {turn.error === undefined ? null : <p className="field-error">{turn.error}</p>}
            {turn.summary === undefined ? null : <SummaryLine summary={turn.summary} />}
          </li>
        ))}
      </ol>
      {lastSummary?.request_body === undefined ? null : (
        <div className="row-actions chat-column-actions">
          <CopyButton text={curlOf(apiBaseUrl, lastSummary.request_body)} label="Copy as curl" />
        </div>
      )}
    </section>
  );
}

export function PlaygroundPage() {
  useDocumentTitle('Playground');
  const api = useApi();
  const config = useConsoleConfig();
  const queryClient = useQueryClient();
  const models = useModels();
  const [searchParams] = useSearchParams();
  const chatModels = (models.data?.data ?? []).filter((model) => model.kind === 'chat');
  const [model, setModel] = useState(searchParams.get('model') ?? '');
  const [compareWith, setCompareWith] = useState('');
  const [settings, setSettings] = useState<Settings>({ system: '', temperature: '', maxTokens: '', stream: true });
  const [input, setInput] = useState('');
  const left = useChatColumn(api);
  const right = useChatColumn(api);
  const chosen = chatModels.some((entry) => entry.id === model) ? model : chatModels[0]?.id ?? '';
  const second = compareWith !== '' && chatModels.some((entry) => entry.id === compareWith) ? compareWith : '';
  const busy = left.busy || right.busy;
  const apiBaseUrl = config.data?.api_base_url ?? '';
  const maxTokens = settings.maxTokens === '' ? null : Number(settings.maxTokens);
  const maxTokensError = maxTokens !== null && (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 32_768) ? 'A whole number from 1 to 32768.' : null;

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = input.trim();
    if (text === '' || chosen === '' || busy || maxTokensError !== null) return;
    setInput('');
    await Promise.all([left.send(chosen, text, settings), second === '' ? Promise.resolve() : right.send(second, text, settings)]);
    void queryClient.invalidateQueries({ queryKey: ['overview'] });
    void queryClient.invalidateQueries({ queryKey: ['usage'] });
    void queryClient.invalidateQueries({ queryKey: ['transactions'] });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) void send();
  };
  const modelOptions = chatModels.length === 0 ? [{ value: '', label: models.isPending ? 'Loading models…' : models.isError ? 'Models could not be loaded' : 'No models available' }] : chatModels.map((entry) => ({ value: entry.id, label: entry.id }));
  const set = <K extends keyof Settings>(name: K, value: Settings[K]) => setSettings({ ...settings, [name]: value });

  return (
    <div className="page stack">
      <PageHeader title="Playground" description="Chat with any model your account may use, or two side by side. Calls are billed and logged like any other request." />
      <Card>
        {models.isError ? <Alert tone="error">{errorMessage(models.error)}</Alert> : null}
        <div className="form-grid">
          <SelectField label="Model" value={chosen} onChange={(event) => setModel(event.target.value)} options={modelOptions} />
          <SelectField label="Compare with" value={second} onChange={(event) => { setCompareWith(event.target.value); right.clear(); }}
            options={[{ value: '', label: 'No second model' }, ...chatModels.filter((entry) => entry.id !== chosen).map((entry) => ({ value: entry.id, label: entry.id }))]} />
          <TextField label="Temperature" type="number" min={0} max={2} step={0.1} value={settings.temperature} onChange={(event) => set('temperature', event.target.value)} placeholder="Model default" />
          <TextField label="Max tokens" type="number" min={1} max={32768} step={1} value={settings.maxTokens} onChange={(event) => set('maxTokens', event.target.value)} placeholder="Model default" error={maxTokensError} />
        </div>
        <FieldFrame label="System prompt" hint="Sent first, before the conversation, with every message.">
          {({ inputId, describedBy }) => <textarea id={inputId} aria-describedby={describedBy} rows={2} value={settings.system} onChange={(event) => set('system', event.target.value)} />}
        </FieldFrame>
        <label className="checkbox-row">
          <input type="checkbox" checked={settings.stream} onChange={(event) => set('stream', event.target.checked)} />
          Stream the answer as it is written
        </label>
      </Card>
      <Card className="chat-card">
        <div className={second === '' ? 'chat-columns' : 'chat-columns chat-columns-two'}>
          <ChatLog column={left} model={chosen} apiBaseUrl={apiBaseUrl} testId="chat-log" />
          {second === '' ? null : <ChatLog column={right} model={second} apiBaseUrl={apiBaseUrl} testId="chat-log-compare" />}
        </div>
        <form className="chat-input" onSubmit={(event) => void send(event)}>
          <FieldFrame label="Message" hint="Ctrl+Enter or ⌘+Enter sends.">
            {({ inputId, describedBy }) => (
              <textarea id={inputId} aria-describedby={describedBy} rows={3} value={input} onChange={(event) => setInput(event.target.value)} onKeyDown={onKeyDown} />
            )}
          </FieldFrame>
          <div className="form-actions">
            <Button onClick={() => { left.clear(); right.clear(); }} disabled={busy || (left.turns.length === 0 && right.turns.length === 0)}>Clear</Button>
            {busy ? <Button variant="danger" onClick={() => { left.stop(); right.stop(); }}>Stop</Button> : null}
            <Button type="submit" variant="primary" busy={busy} disabled={chosen === '' || input.trim() === '' || maxTokensError !== null}>Send</Button>
          </div>
        </form>
      </Card>
    </div>
  );
}
