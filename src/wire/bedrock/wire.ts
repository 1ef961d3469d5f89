import { NO_PASS_THROUGH, type Wire } from '../wire.js';

/** Amazon Bedrock's Converse API: no client speaks it, so every request reaches it translated. */
export const bedrockConverseWire: Wire<never> = { name: 'bedrock-converse', passThrough: NO_PASS_THROUGH };
