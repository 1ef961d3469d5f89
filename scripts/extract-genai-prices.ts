import { writeFileSync } from 'node:fs';
import { GENAI_PRICES_FILE } from '../src/catalog/bundled-price-data.js';
import { extractGenaiPrices, formatGenaiPrices } from './genai-prices-data.js';

/**
 * `npm run catalog:prices`: writes the catalog's part of the installed @pydantic/genai-prices data to
 * src/catalog/genai-prices.json (run it after upgrading the package; a unit test fails until the file matches).
 */
const data = extractGenaiPrices();
const target = new URL(`../../src/catalog/${GENAI_PRICES_FILE}`, import.meta.url);
writeFileSync(target, formatGenaiPrices(data));
console.log(`${target.pathname}: ${data.package} ${data.version}, ${Object.keys(data.providers).length} providers, ${Object.values(data.providers).reduce((sum, models) => sum + models.length, 0)} models`);
