/**
 * Readers of a form draft's number fields: empty reads as null (unset); anything else that is not a fit number
 * records the field's error in `errors` (the form shows it beside the field).
 */
export function draftNumbers<Field extends string>(errors: Partial<Record<Field, string>>) {
  return {
    /** An amount in USD, 0 or more. */
    money(field: Field, text: string): number | null {
      if (text.trim() === '') return null;
      const value = Number(text);
      if (!Number.isFinite(value) || value < 0) errors[field] = 'Enter an amount in USD, 0 or more.';
      return value;
    },
    /** A whole number, 1 or more (a limit such as RPM). */
    count(field: Field, text: string): number | null {
      if (text.trim() === '') return null;
      const value = Number(text);
      if (!Number.isInteger(value) || value < 1) errors[field] = 'Enter a whole number, 1 or more.';
      return value;
    },
  };
}
