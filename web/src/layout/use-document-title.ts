import { useEffect } from 'react';

/** Each page names itself in the tab title (screen readers announce it on navigation too). */
export function useDocumentTitle(page: string | null, product = 'Console'): void {
  useEffect(() => {
    if (page !== null) document.title = `${page} · ${product}`;
    else if (!document.title.includes('·')) document.title = product;
  }, [page, product]);
}
