import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from 'react';

interface FieldFrameProps {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  children: (ids: { inputId: string; describedBy: string | undefined }) => ReactNode;
}

/** Label, control, hint and error wired together by ids, so screen readers announce all three. */
export function FieldFrame({ label, hint, error, children }: FieldFrameProps) {
  const inputId = useId();
  const hintId = `${inputId}-hint`;
  const errorId = `${inputId}-error`;
  const describedBy = [hint === undefined ? null : hintId, error == null ? null : errorId].filter((id) => id !== null).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={inputId}>{label}</label>
      {children({ inputId, describedBy })}
      {hint === undefined ? null : <p id={hintId} className="field-hint">{hint}</p>}
      {error == null ? null : <p id={errorId} className="field-error">{error}</p>}
    </div>
  );
}

interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> {
  label: string;
  hint?: ReactNode;
  error?: string | null;
}

export function TextField({ label, hint, error, ...input }: TextFieldProps) {
  return (
    <FieldFrame label={label} hint={hint} error={error}>
      {({ inputId, describedBy }) => <input {...input} id={inputId} aria-describedby={describedBy} aria-invalid={error == null ? undefined : true} />}
    </FieldFrame>
  );
}

interface SelectFieldProps extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> {
  label: string;
  hint?: ReactNode;
  options: { value: string; label: string }[];
}

export function SelectField({ label, hint, options, ...select }: SelectFieldProps) {
  return (
    <FieldFrame label={label} hint={hint}>
      {({ inputId, describedBy }) => (
        <select {...select} id={inputId} aria-describedby={describedBy}>
          {options.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
        </select>
      )}
    </FieldFrame>
  );
}
