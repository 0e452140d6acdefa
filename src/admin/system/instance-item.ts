/**
 * One server instance as GET /admin/api/v1/instances answers it, in the wire's snake_case (the
 * schema in openapi/system.paths.ts): what the console's dashboard reads and the tests check.
 */
export interface InstanceItem {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  node: string;
  started_at: string;
  /** Its last heartbeat. */
  last_seen_at: string;
  live: boolean;
}
