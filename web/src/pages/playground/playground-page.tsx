import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { PlaygroundSummary } from '../../api/types';
import { formatCost, formatInteger, formatMilliseconds } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Card, PageHeader } from '../../ui/feedback';
import { FieldFrame, SelectField, TextField } from '../../ui/field';
import { useModels } from '../keys/key-queries';
import { readChatStream } from './read-chat-stream';

interface Turn {
  role: 'user' | 'assistant';
  content: string;
  summary?: PlaygroundSummary;
  error?: string;
}

function SummaryLine({ summary }: { summary: PlaygroundSummary }) {
  return (
    <p className="turn-summary" data-testid="answer-summary">
      {formatInteger(summary.input_tokens)} in · {formatInteger(summary.output_tokens)} out · {formatCost(summary.cost_usd)} · {formatMilliseconds(summary.latency_ms)}
      {summary.first_token_ms == null ? null : <> (first token {formatMilliseconds(summary.first_token_ms)})</>}
    </p>
  );
}

export function PlaygroundPage() {
  useDocumentTitle('Playground');
  const api = useApi();
  const queryClient = useQueryClient();
  const models = useModels();
  const chatModels = (models.data?.data ?? []).filter((model) => model.kind === 'chat');
  const [model, setModel] = useState('');
  const [temperature, setTemperature] = useState('');
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const chosen = model !== '' ? model : chatModels[0]?.id ?? '';

  useEffect(() => () => abort.current?.abort(), []);

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = input.trim();
    if (text === '' || chosen === '' || streaming) return;
    const history: Turn[] = [...turns, { role: 'user', content: text }];
    setTurns([...history, { role: 'assistant', content: '' }]);
    setInput('');
    setError(null);
    setStreaming(true);
    const controller = new AbortController();
    abort.current = controller;
    const update = (change: (turn: Turn) => Turn) => setTurns((current) => [...current.slice(0, -1), change(current[current.length - 1] as Turn)]);
    try {
      const temperatureValue = temperature === '' ? undefined : Number(temperature);
      const response = await api.stream('/api/playground/chat', {
        model: chosen,
        messages: history.map((turn) => ({ role: turn.role, content: turn.content })),
        ...(temperatureValue === undefined || !Number.isFinite(temperatureValue) ? {} : { temperature: temperatureValue }),
      }, controller.signal);
      if (response.body === null) throw new Error('empty answer');
      for await (const part of readChatStream(response.body)) {
        if (part.kind === 'delta') update((turn) => ({ ...turn, content: turn.content + part.text }));
        else if (part.kind === 'summary') update((turn) => ({ ...turn, summary: part.summary }));
        else update((turn) => ({ ...turn, error: part.message }));
      }
    } catch (thrown) {
      const message = errorMessage(thrown);
      update((turn) => ({ ...turn, error: message }));
      if (!(thrown instanceof Error && thrown.name === 'AbortError')) setError(message);
    } finally {
      setStreaming(false);
      abort.current = null;
      void queryClient.invalidateQueries({ queryKey: ['overview'] });
      void queryClient.invalidateQueries({ queryKey: ['usage'] });
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) void send();
  };

  return (
    <div className="page stack">
      <PageHeader title="Playground" description="Chat with any model your account may use. Calls are billed and logged like any other request." />
      <Card>
        <div className="form-grid">
          <SelectField label="Model" value={chosen} onChange={(event) => setModel(event.target.value)}
            options={chatModels.length === 0 ? [{ value: '', label: models.isPending ? 'Loading models…' : 'No models available' }] : chatModels.map((entry) => ({ value: entry.id, label: entry.id }))} />
          <TextField label="Temperature" type="number" min={0} max={2} step={0.1} value={temperature} onChange={(event) => setTemperature(event.target.value)} placeholder="Model default" />
        </div>
      </Card>
      <Card className="chat-card">
        <ol className="chat-log" aria-live="polite" aria-busy={streaming} data-testid="chat-log">
          {turns.length === 0 ? <li className="empty">Say something to start.</li> : null}
          {turns.map((turn, index) => (
            <li key={index} className={`turn turn-${turn.role}`}>
              <span className="turn-role">{turn.role === 'user' ? 'You' : chosen}</span>
              <p className="turn-text">{turn.content}{turn.role === 'assistant' && streaming && index === turns.length - 1 ? <span className="cursor" aria-hidden="true">▍</span> : null}</p>
              {turn.error === undefined ? null : <p className="field-error">{turn.error}</p>}
              {turn.summary === undefined ? null : <SummaryLine summary={turn.summary} />}
            </li>
          ))}
        </ol>
        {error === null ? null : <Alert tone="error">{error}</Alert>}
        <form className="chat-input" onSubmit={(event) => void send(event)}>
          <FieldFrame label="Message" hint="Ctrl+Enter or ⌘+Enter sends.">
            {({ inputId, describedBy }) => (
              <textarea id={inputId} aria-describedby={describedBy} rows={3} value={input} onChange={(event) => setInput(event.target.value)} onKeyDown={onKeyDown} />
            )}
          </FieldFrame>
          <div className="form-actions">
            <Button onClick={() => { setTurns([]); setError(null); }} disabled={streaming || turns.length === 0}>Clear</Button>
            {streaming ? <Button variant="danger" onClick={() => abort.current?.abort()}>Stop</Button> : null}
            <Button type="submit" variant="primary" busy={streaming} disabled={chosen === '' || input.trim() === ''}>Send</Button>
          </div>
        </form>
      </Card>
    </div>
  );
}
