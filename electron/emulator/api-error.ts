/**
 * The emulator's HTTP error: a status plus the JSON body it answers with. ASSUMPTION (spec §7 does not
 * show error bodies): `{ "error": { "code": "...", "message": "...", "field"?: "a.b" } }`, matching
 * `ErrorBody` in core/protocol.ts.
 */
import type { ErrorBody } from '../core/protocol.ts';

export type ApiErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'insufficient_credits'
  | 'conflict';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly field: string | undefined;

  constructor(status: number, code: ApiErrorCode, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) } };
  }
}
