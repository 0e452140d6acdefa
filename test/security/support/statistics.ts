/**
 * Statistics for the timing tests (issue 7): pure functions, no I/O, no clock.
 *
 * A timing test asks whether two samples of durations come from the same distribution. A ratio
 * of medians against a fixed margin answers that badly: one burst of work from another process
 * can push it past any margin tight enough to mean something. Here the question is split in two,
 * and a leak needs both answers to be yes:
 *  - is the difference real? A two-sided Mann–Whitney U test (rank-based, so a few huge outliers
 *    weigh no more than a few slightly slow calls) gives the p-value;
 *  - is it large enough to matter? The Hodges–Lehmann shift (the median of all pairwise
 *    differences) relative to the baseline's median gives the effect. With hundreds of samples a
 *    difference of a fraction of a percent is "significant" and still tells an attacker nothing.
 */

/** The q-quantile of values already sorted ascending, linearly interpolated between order statistics. */
function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

/** The q-quantile (0.5: the median), linearly interpolated between order statistics. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new RangeError('quantile of an empty sample');
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile ${q} is outside [0, 1]`);
  return quantileOfSorted(Float64Array.from(values).sort(), q);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * Complementary error function, W. J. Cody's rational Chebyshev approximation as given in
 * Numerical Recipes (`erfcc`): relative error below 1.2e-7 everywhere, far tails included, which
 * is all a p-value compared with 0.001 needs.
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -z * z -
    1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const value = t * Math.exp(poly);
  return x >= 0 ? value : 2 - value;
}

/** P(Z > z) for a standard normal Z. */
export function normalSurvival(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

export interface MannWhitneyResult {
  /** U of the first sample: the number of pairs (a, b) with a > b, ties counting one half. */
  u: number;
  /** Standardised statistic, continuity-corrected; positive when the first sample tends to be larger. */
  z: number;
  /** Two-sided p-value. */
  pValue: number;
}

/**
 * Two-sided Mann–Whitney U test, normal approximation with the tie correction of the variance
 * and a continuity correction (as scipy.stats.mannwhitneyu(method='asymptotic')). The
 * approximation is good for samples of 20 or more each; smaller samples are refused rather than
 * answered wrongly.
 */
export function mannWhitneyU(a: readonly number[], b: readonly number[]): MannWhitneyResult {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 < 20 || n2 < 20) throw new RangeError(`Mann–Whitney normal approximation needs 20 or more values per sample (got ${n1} and ${n2})`);
  if ([...a, ...b].some((v) => !Number.isFinite(v))) throw new RangeError('Mann–Whitney of a sample holding a non-finite value');
  const pooled = [...a.map((value) => ({ value, first: true })), ...b.map((value) => ({ value, first: false }))].sort((x, y) => x.value - y.value);
  const n = n1 + n2;
  let rankSumFirst = 0;
  let tieTerm = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && pooled[j + 1].value === pooled[i].value) j++;
    const tied = j - i + 1;
    const averageRank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (pooled[k].first) rankSumFirst += averageRank;
    tieTerm += tied ** 3 - tied;
    i = j + 1;
  }
  const u = rankSumFirst - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)));
  if (variance <= 0) return { u, z: 0, pValue: 1 }; // every value equal: no evidence of any difference
  const distance = Math.max(Math.abs(u - mean) - 0.5, 0);
  const z = distance === 0 ? 0 : (Math.sign(u - mean) * distance) / Math.sqrt(variance);
  return { u, z, pValue: Math.min(1, 2 * normalSurvival(Math.abs(z))) };
}

/**
 * Hodges–Lehmann estimate of the shift of `a` relative to `b`: the median of the n1·n2 pairwise
 * differences a[i] − b[j]. Robust like a median, and the estimator that goes with the U test.
 */
export function hodgesLehmannShift(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) throw new RangeError('Hodges–Lehmann shift of an empty sample');
  const differences = new Float64Array(a.length * b.length);
  let k = 0;
  for (const x of a) for (const y of b) differences[k++] = x - y;
  return quantileOfSorted(differences.sort(), 0.5);
}

/** When a difference between two timing samples counts as a leak. */
export interface LeakCriteria {
  /** The difference must be statistically significant: two-sided p below this. */
  alpha: number;
  /** And practically large: |Hodges–Lehmann shift| above this fraction of the baseline's median. */
  minRelativeEffect: number;
}

export interface TimingComparison {
  n: { candidate: number; baseline: number };
  median: { candidate: number; baseline: number };
  /** median(candidate) / median(baseline). */
  ratioOfMedians: number;
  /** Hodges–Lehmann shift of candidate over baseline, in the samples' unit. */
  shift: number;
  /** shift / median(baseline): +0.1 means the candidate takes about 10 % longer. */
  relativeShift: number;
  pValue: number;
  significant: boolean;
  large: boolean;
  /** Both significant and large. */
  leak: boolean;
}

/** Compares a candidate's timings with a baseline's and decides whether they differ by a leak. */
export function compareTimings(candidate: readonly number[], baseline: readonly number[], criteria: LeakCriteria): TimingComparison {
  const medians = { candidate: median(candidate), baseline: median(baseline) };
  if (!(medians.baseline > 0)) throw new RangeError(`baseline median must be positive (got ${medians.baseline})`);
  const { pValue } = mannWhitneyU(candidate, baseline);
  const shift = hodgesLehmannShift(candidate, baseline);
  const relativeShift = shift / medians.baseline;
  const significant = pValue < criteria.alpha;
  const large = Math.abs(relativeShift) > criteria.minRelativeEffect;
  return {
    n: { candidate: candidate.length, baseline: baseline.length },
    median: medians,
    ratioOfMedians: medians.candidate / medians.baseline,
    shift,
    relativeShift,
    pValue,
    significant,
    large,
    leak: significant && large,
  };
}
