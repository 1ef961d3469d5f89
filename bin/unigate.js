#!/usr/bin/env node
// Entry point of the `unigate` command (npm start runs `unigate serve`). The TypeScript is compiled by `npm ci`.
import { main } from '../dist/src/cli.js';

await main(process.argv.slice(2));
