import { useState } from 'react';
import { Button } from './button';

/** Copies text to the clipboard and says so, for sighted and screen-reader users alike. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    window.setTimeout(() => setState('idle'), 2500);
  };
  return (
    <>
      <Button onClick={() => void copy()} variant="secondary" className="copy-button">
        {state === 'copied' ? 'Copied' : label}
      </Button>
      <span className="visually-hidden" aria-live="polite">
        {state === 'copied' ? 'Copied to the clipboard.' : state === 'failed' ? 'Copying failed; select the text and copy it.' : ''}
      </span>
    </>
  );
}
