/**
 * The load generators: autocannon for a request that is the same every time (a bearer read, a
 * client_credentials token request) or differs only in headers or a body made in advance (a DPoP
 * proof per read, a client assertion per token request), and a worker loop for units of work that
 * change from one iteration to the next (a refresh that rotates its token, a complete
 * authorization-code flow, a login). All report { rps, p50, p99, errors, requests } and sample the
 * server's RSS meanwhile.
 */
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';

/** Samples `sample()` every 250 ms until stopped; returns a function that stops and gives the maximum. */
function sampler(sample) {
  let max = sample();
  const timer = setInterval(() => (max = Math.max(max, sample())), 250);
  return () => {
    clearInterval(timer);
    return Math.max(max, sample());
  };
}

/** autocannon against one fixed request; a response with another status than `expect` is an error. */
export async function fixedRequestLoad({ baseUrl, request, connections, seconds, expect = 200, rssMb }) {
  const stopSampling = sampler(rssMb);
  const result = await autocannon({
    // The whole URL: autocannon sends `path` only with some methods.
    url: new URL(request.path, baseUrl).href,
    method: request.method,
    headers: request.headers,
    body: request.body,
    connections,
    duration: seconds,
    // Requests are counted as errors by status below, not by autocannon's own 2xx rule.
    expectBody: undefined,
  });
  const rss = stopSampling();
  const good = result.statusCodeStats?.[String(expect)]?.count ?? (expect >= 200 && expect < 300 ? result['2xx'] : 0);
  return outcome(result, good, seconds, rss);
}

/** What a run measured: responses with the expected status per second, latency, everything else as errors, memory. */
function outcome(result, good, seconds, rssMb) {
  const total = result.requests.total;
  return { rps: good / seconds, p50: result.latency.p50, p99: result.latency.p99, errors: total - good + result.errors + result.timeouts, requests: total, rssMb };
}

/**
 * autocannon against a request that must differ every time (scenario i: a DPoP proof per request;
 * scenario j: a client assertion per token request; issue 47: a client, a token or a person picked
 * per request): each request gets what `next()` returns ({ path?, headers?, body? }; headers are
 * merged over request.headers), or else the headers `nextHeaders()` returns and, when `nextBody`
 * is given, the body it returns. All must be cheap (a pick, or a pool made beforehand). Otherwise
 * as fixedRequestLoad, and the first unexpected response is kept.
 */
export async function varyingRequestLoad({ baseUrl, request, next, nextHeaders = () => ({}), nextBody, connections, seconds, expect = 200, rssMb }) {
  next ??= () => ({ headers: nextHeaders(), ...(nextBody && { body: nextBody() }) });
  let firstError;
  const stopSampling = sampler(rssMb);
  const result = await autocannon({
    url: new URL(request.path, baseUrl).href,
    connections,
    duration: seconds,
    expectBody: undefined,
    requests: [
      {
        method: request.method,
        path: request.path,
        ...(request.body !== undefined && { body: request.body }),
        // Called for every request, the first of each connection included; autocannon sets
        // Content-Length from the body returned here.
        setupRequest: (req) => {
          const { path, headers, body } = next();
          return { ...req, ...(path !== undefined && { path }), headers: { ...request.headers, ...headers }, ...(body !== undefined && { body }) };
        },
        onResponse: (status, body) => {
          if (status !== expect) firstError ??= `${status} ${body.slice(0, 300)}`;
        },
      },
    ],
  });
  const rss = stopSampling();
  const good = result.statusCodeStats?.[String(expect)]?.count ?? 0;
  return { ...outcome(result, good, seconds, rss), firstError };
}

/**
 * `workers` concurrent loops, each calling its own `makeStep(worker)()` until `seconds` are over.
 * A step that throws counts as an error (and the worker goes on).
 */
export async function stepLoad({ makeStep, workers, seconds, rssMb }) {
  const steps = Array.from({ length: workers }, (_, worker) => makeStep(worker));
  const latencies = [];
  let errors = 0;
  let firstError;
  const stopSampling = sampler(rssMb);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    steps.map(async (step) => {
      while (performance.now() < deadline) {
        const begin = performance.now();
        try {
          await step();
          latencies.push(performance.now() - begin);
        } catch (error) {
          errors++;
          firstError ??= error;
          // A failing server must not turn the loop into a busy spin.
          await sleep(5);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const rss = stopSampling();
  if (firstError && latencies.length === 0) throw new Error(`every unit failed: ${firstError.message}`);
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
    requests: latencies.length,
    rssMb: rss,
    firstError: firstError?.message,
  };
}

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
