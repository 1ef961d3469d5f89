import { loadKyselyFromBundle } from './config/bundled-kysely.js';
import { loadZodInEnglishOnly } from './config/zod-locales.js';

// Before cli.js and what it loads import zod and kysely (see zod-locales.ts and bundled-kysely.ts).
loadZodInEnglishOnly();
loadKyselyFromBundle();
const { main } = await import('./cli.js');
await main(process.argv.slice(2));
