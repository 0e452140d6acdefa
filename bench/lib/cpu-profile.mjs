/**
 * V8 CPU profiles (`--cpu-prof`) of a server under load: the share of its CPU per step, and a flame
 * graph (SVG), over a window of the profile (the measured seconds alone, not start-up or warm-up).
 * The window is on the monotonic clock in µs, which V8's profiles and `process.hrtime` of any
 * process on this machine share.
 */
import { readFileSync } from 'node:fs';

/** Now on the monotonic clock, in µs. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

const FRAMEWORK = /node_modules\/(fastify|@fastify|@nestjs|passport|passport-http|passport-http-bearer|class-validator|class-transformer|find-my-way|avvio|light-my-request|rxjs|reflect-metadata|fast-json-stringify|ajv|secure-json-parse|pino|prom-client)\//;
const DRIVER = /node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-date|postgres-array|typeorm|better-sqlite3)\//;
const CRYPTO = /node_modules\/(jose|@node-rs)\/|^node:internal\/crypto/;

/** The steps of a request the cost model splits the CPU into. */
export const CATEGORIES = ['framework', 'database driver', 'crypto', 'latchkey', 'node (http, streams, timers)', 'socket writes', 'gc', 'runtime', 'other'];

export function categoryOf({ url, functionName }) {
  if (!url) {
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === 'writev' || functionName === 'writeUtf8String' || functionName === 'writeBuffer') return 'socket writes';
    return 'runtime';
  }
  if (FRAMEWORK.test(url)) return 'framework';
  if (DRIVER.test(url)) return 'database driver';
  if (CRYPTO.test(url)) return 'crypto';
  if (url.includes('/dist/src/')) return 'latchkey';
  if (url.startsWith('node:')) return 'node (http, streams, timers)';
  return 'other';
}

/** A profile with each node's self time (µs) over the window [from, to], and its parents. */
export function readProfile(file, [from, to]) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, { ...node, self: 0, total: 0, parent: undefined }]));
  for (const node of nodes.values()) for (const child of node.children ?? []) nodes.get(child).parent = node.id;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (at >= from && at <= to) nodes.get(id).self += dt;
  });
  return { nodes, root: profile.nodes[0].id };
}

/** The share of the busy time per category, and the idle share of all time. */
export function categoryShares({ nodes }) {
  const time = new Map();
  let total = 0;
  for (const node of nodes.values()) {
    if (node.self === 0) continue;
    const category = categoryOf(node.callFrame);
    time.set(category, (time.get(category) ?? 0) + node.self);
    total += node.self;
  }
  const idle = time.get('idle') ?? 0;
  const busy = total - idle;
  const shares = {};
  for (const [category, t] of time) if (category !== 'idle') shares[category] = busy > 0 ? t / busy : 0;
  return { idle: total > 0 ? idle / total : 0, shares };
}

const COLOURS = {
  framework: '#e8a33d',
  'database driver': '#4e9a6f',
  crypto: '#9b6ed8',
  latchkey: '#d9534f',
  'node (http, streams, timers)': '#5b8fd6',
  'socket writes': '#2f5f9e',
  gc: '#8a8a8a',
  runtime: '#b0b0b0',
  other: '#c9b458',
};

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A flame graph (an icicle: callers above callees) of the busy time, as a self-contained SVG: a
 * frame's width is its share of the CPU, its colour its step (the legend), and hovering shows its
 * function, file and µs per request (`requests` in the window).
 */
export function flameGraphSvg(profile, { title, requests, width = 1200 }) {
  const { nodes, root } = profile;
  const total = (node) => {
    if (node.callFrame.functionName === '(idle)') return (node.total = 0);
    node.total = node.self + (node.children ?? []).reduce((sum, child) => sum + total(nodes.get(child)), 0);
    return node.total;
  };
  const busy = total(nodes.get(root));
  const ROW = 17;
  const TOP = 44;
  const rects = [];
  let depthMax = 0;
  const place = (node, x, depth) => {
    const w = (node.total / busy) * width;
    if (w < 0.4) return;
    depthMax = Math.max(depthMax, depth);
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where = url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}` : '';
    const us = requests > 0 ? node.total / requests : 0;
    const label = `${name}${where ? ` ${where.split('/').pop()}` : ''}`;
    const fits = Math.floor((w - 6) / 6.6);
    rects.push(
      `<g><title>${escape(`${name} ${where}\n${us.toFixed(1)} µs per request, ${((100 * node.total) / busy).toFixed(1)}% of the CPU`)}</title>` +
        `<rect x="${x.toFixed(1)}" y="${TOP + depth * ROW}" width="${Math.max(w - 0.5, 0.3).toFixed(1)}" height="${ROW - 1}" fill="${COLOURS[categoryOf(node.callFrame)] ?? COLOURS.other}" rx="2"/>` +
        (fits >= 3 ? `<text x="${(x + 3).toFixed(1)}" y="${TOP + depth * ROW + 12}">${escape(label.length > fits ? `${label.slice(0, fits - 1)}…` : label)}</text>` : '') +
        '</g>',
    );
    let childX = x;
    for (const child of [...(node.children ?? [])].map((id) => nodes.get(id)).sort((a, b) => b.total - a.total)) {
      place(child, childX, depth + 1);
      childX += (child.total / busy) * width;
    }
  };
  place(nodes.get(root), 0, 0);
  const legendY = TOP + (depthMax + 1) * ROW + 16;
  let legendX = 0;
  const legend = CATEGORIES.map((c) => {
    const item = `<rect x="${legendX}" y="${legendY}" width="12" height="12" fill="${COLOURS[c]}"/><text x="${legendX + 16}" y="${legendY + 10}">${escape(c)}</text>`;
    legendX += 16 + c.length * 6.6 + 18;
    return item;
  }).join('');
  const height = legendY + 24;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11" role="img" aria-label="${escape(title)}">
<title>${escape(title)}</title>
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="0" y="16" font-size="15" font-weight="600">${escape(title)}</text>
<text x="0" y="34" fill="#444">${escape(`${requests > 0 ? `${(busy / requests).toFixed(0)} µs of CPU per request` : ''}; callers above callees; width = share of the CPU; hover for µs per request`)}</text>
${rects.join('\n')}
${legend}
</svg>
`;
}
