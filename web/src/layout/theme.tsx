import { useState } from 'react';
import * as DropdownMenu from '@radix-ui/react-dropdown-menu';

/** The console's colour theme: the system's setting, or light or dark as chosen in this browser. */
export type Theme = 'system' | 'light' | 'dark';

const STORAGE_KEY = 'unigate.theme';

function storedTheme(): Theme {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

function apply(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Called once before the first render, so a chosen theme shows from the first paint. */
export function applyStoredTheme(): void {
  apply(storedTheme());
}

/** Light, dark or the system's: radio items for the account menu. */
export function ThemeMenuItems() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const choose = (value: string) => {
    const next: Theme = value === 'light' || value === 'dark' ? value : 'system';
    try {
      if (next === 'system') window.localStorage.removeItem(STORAGE_KEY);
      else window.localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Storage refused (private mode): the choice lasts for this page.
    }
    apply(next);
    setTheme(next);
  };
  return (
    <>
      <DropdownMenu.Label className="menu-label">Theme</DropdownMenu.Label>
      <DropdownMenu.RadioGroup value={theme} onValueChange={choose}>
        {(['system', 'light', 'dark'] as const).map((value) => (
          <DropdownMenu.RadioItem key={value} value={value} className="menu-item menu-radio">
            <span className="menu-check" aria-hidden="true">{theme === value ? '●' : ''}</span>
            {value === 'system' ? 'System' : value === 'light' ? 'Light' : 'Dark'}
          </DropdownMenu.RadioItem>
        ))}
      </DropdownMenu.RadioGroup>
    </>
  );
}
