/** The part of s3rver (a plain JavaScript package without types) the S3 tests use. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    configureBuckets?: Array<{ name: string }>;
    allowMismatchedSignatures?: boolean;
    resetOnClose?: boolean;
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** The request handler, to serve behind another server. */
    getMiddleware(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
