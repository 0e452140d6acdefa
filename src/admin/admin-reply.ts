import type { FastifyReply } from 'fastify';

/** The admin API's own base path (issue 48): apart from the data API's /api/v1, under /admin so one proxy rule can fence all of it. */
export const ADMIN_API = 'admin/api/v1';

/**
 * A JSON answer of the admin API. Never cached (it answers a request carrying an administrator's
 * token, and may carry a secret shown once: RFC 9700 §4.2.4).
 */
export function sendAdminJson(reply: FastifyReply, body: unknown, status = 200): void {
  void reply.code(status).header('Cache-Control', 'no-store').header('Pragma', 'no-cache').header('Content-Type', 'application/json;charset=UTF-8').send(JSON.stringify(body));
}
