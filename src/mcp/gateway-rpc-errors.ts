/**
 * JSON-RPC error codes the gateway answers with for its own refusals, in the range JSON-RPC leaves to
 * implementations (-32000 to -32099); `data.code` carries the gateway's error code as its HTTP errors do.
 */

/** A guardrail policy refused a tool or stopped its result. */
export const GUARDRAIL_BLOCKED = -32010;
/** The tool's server is down by its last health check and was not tried. */
export const SERVER_UNAVAILABLE = -32011;

/** The gateway refused a prompt or resource read (the account's state, its balance, a limit); `data.status` is the HTTP status it would have. */
export const REQUEST_REFUSED = -32012;

/** MCP's own code for a resource URI that names nothing this caller may read. */
export const RESOURCE_NOT_FOUND = -32002;
