import { loadZodInEnglishOnly } from './config/zod-locales.js';

// Before cli.js and what it loads import zod (see zod-locales.ts).
loadZodInEnglishOnly();
const { main } = await import('./cli.js');
await main(process.argv.slice(2));
