/**
 * One scenario's load, whatever its kind, for every script that measures one (run.mjs, cost.mjs,
 * memory.mjs): a fixed request, or one that takes its path, headers or body from `next()` per request
 * (issue 47: a token, client or item picked per request); a DPoP read with a proof per request; a
 * client-assertion token request; or units of work run by `workers` loops (refresh, code flows).
 */
import { assertionTokenLoad } from './client-assertion.mjs';
import { dpopReadLoad } from './dpop.mjs';
import { fixedRequestLoad, stepLoad, varyingRequestLoad } from './load.mjs';

export function scenarioLoad(definition, ctx, { baseUrl, connections, workers, seconds, rssMb }) {
  switch (definition.kind) {
    case 'fixed': {
      const { next, ...request } = definition.request(ctx);
      const load = { baseUrl, request, connections, seconds, expect: definition.expect ?? 200, rssMb };
      return next ? varyingRequestLoad({ ...load, next }) : fixedRequestLoad(load);
    }
    case 'dpop':
      return dpopReadLoad({ baseUrl, read: definition.read(ctx), connections, seconds, rssMb });
    case 'assertion':
      return assertionTokenLoad({ baseUrl, token: definition.token(ctx), connections, seconds, rssMb });
    case 'steps':
      return stepLoad({ makeStep: (worker) => definition.make(ctx, worker), workers, seconds, rssMb });
    default:
      throw new Error(`unknown scenario kind ${definition.kind}`);
  }
}
