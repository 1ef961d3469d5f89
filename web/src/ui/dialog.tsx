import { useEffect, useRef, type ReactNode } from 'react';

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** Escape and the backdrop do not close it (a secret shown once must be acknowledged). */
  requireExplicitClose?: boolean;
}

/**
 * A modal on the native <dialog> element: the browser traps focus, makes the page behind it inert, and returns
 * focus to the opener on close. (Radix's dialog would inject a <style> element for scroll locking, which the
 * console's Content-Security-Policy forbids.)
 */
export function Dialog({ open, title, onClose, children, requireExplicitClose = false }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={`${title}-title`.replace(/\W+/g, '-')}
      onCancel={(event) => {
        event.preventDefault();
        if (!requireExplicitClose) onClose();
      }}
      onClick={(event) => {
        if (!requireExplicitClose && event.target === ref.current) onClose();
      }}
    >
      {open ? (
        <div className="dialog-body">
          <h2 id={`${title}-title`.replace(/\W+/g, '-')}>{title}</h2>
          {children}
        </div>
      ) : null}
    </dialog>
  );
}
