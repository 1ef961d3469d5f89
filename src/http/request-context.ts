import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientFamily } from '../codecs/client-family.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { CallerGone } from '../relay/caller-signal.js';
import type { RequestObservation } from '../telemetry/request-observation.js';

export interface RequestContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Path parameters captured by the route pattern. */
  params: Record<string, string>;
  /** `performance.now()` when the request arrived, for latency. */
  readonly startedAt: number;
  readonly clientIp: string;
  /** The protocol family the caller speaks: its errors take this family's shape. */
  family: ClientFamily;
  /**
   * The caller leaving before its answer finished: aborted once, when the response closes unfinished, by whoever
   * serves the request (the listener frame, the in-process runner). The relay listens here, not on the response.
   */
  readonly callerGone: CallerGone;
  /** The request's access log line and trace, set by the listener frame when either follows it; null otherwise. */
  observation: RequestObservation | null;
  /** The body, when a route in front of the operation has read it already (the operation reads this then). */
  preReadBody?: Buffer;
  /** The caller, when a route in front of the operation has authenticated it already (the operation takes it then). */
  authenticated?: { readonly key: ApiKey; readonly account: Account };
  /** Size of the request body once read as JSON (an upper bound of its tokens). */
  bodyBytes?: number;
  /**
   * Set only by the console's operator bridge (src/console/operator/admin-bridge.ts) on the copy of a request it has
   * already authorised: a signed-in operator with a second factor and a role that allows the call. Admin handlers
   * then skip the admin token. Nothing a client sends sets it.
   */
  readonly operatorAuthorised?: true;
  /**
   * Who that operator is, on the same copies: their user id, and whether their role manages operators (an owner's).
   * Admin handlers use it where a change reaches an operator through one of their accounts.
   */
  readonly operator?: { readonly userId: string; readonly managesOperators: boolean };
  /**
   * Set only on the requests the gateway makes in process (http/in-process-request.ts): a batch's lines, the rounds
   * of a request whose tools the gateway runs. The caller was checked by whoever made the request. Nothing a client
   * sends sets it.
   */
  readonly inProcess?: InProcessCaller;
}

/** Who an in-process request is made for: the key and account already checked; a batch's id when it is a batch's line (batch prices). */
export interface InProcessCaller {
  readonly key: ApiKey;
  readonly account: Account;
  readonly batchId?: string;
}

export type RouteHandler = (context: RequestContext) => Promise<void>;
