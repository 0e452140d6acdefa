/** snake_case `error` codes for plain HTTP failures, one consistent mapping for every JSON error body. */
const CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  431: 'request_header_fields_too_large',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

export function httpErrorCode(status: number): string {
  return CODES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request');
}
