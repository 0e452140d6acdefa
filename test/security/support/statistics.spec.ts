import { compareTimings, erfc, hodgesLehmannShift, mannWhitneyU, median, normalSurvival, quantile, type LeakCriteria } from './statistics.js';

/**
 * Expected values are worked out by hand in the comments and agree with
 * scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='asymptotic') (scipy 1.17),
 * which uses the same tie and continuity corrections; erfc values with scipy.special.erfc.
 */

/** 1, 2, …, n. */
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** a = 6..25 against b = 1..20: a shift of 5 with 15 tied pairs of values (6..20). */
const SHIFTED_BY_5 = { a: oneTo(20).map((x) => x + 5), b: oneTo(20) };
/** Many ties: a = 1×10, 2×10, 3×5 against b = 2×10, 3×10, 4×5. */
const TIED = {
  a: [...Array<number>(10).fill(1), ...Array<number>(10).fill(2), ...Array<number>(5).fill(3)],
  b: [...Array<number>(10).fill(2), ...Array<number>(10).fill(3), ...Array<number>(5).fill(4)],
};

const CRITERIA: LeakCriteria = { alpha: 0.001, minRelativeEffect: 0.1 };

describe('timing statistics (test/security/support/statistics.ts)', () => {
  describe(`${quantile.name} and ${median.name}`, () => {
    it('interpolates between order statistics, whatever the order of the input', () => {
      expect(median([3, 1, 2])).toBe(2);
      expect(median([4, 1, 3, 2])).toBe(2.5);
      expect(quantile([5, 4, 3, 2, 1], 0.25)).toBe(2);
      expect(quantile([1, 2], 0.25)).toBe(1.25);
      expect(quantile([7], 0.9)).toBe(7);
    });

    it('refuses an empty sample and a quantile outside [0, 1]', () => {
      expect(() => median([])).toThrow(RangeError);
      expect(() => quantile([1], 1.5)).toThrow(RangeError);
    });
  });

  describe(`${erfc.name} and ${normalSurvival.name}`, () => {
    it.each([
      [0, 1],
      [1, 0.15729920705028516],
      [-1, 1.8427007929497148],
      [3, 2.2090496998585445e-5],
      [6, 2.1519736712498913e-17],
    ])('erfc(%d) ≈ %d to a relative 1e-6, far tail included', (x, expected) => {
      expect(Math.abs(erfc(x) - expected) / expected).toBeLessThan(1e-6);
    });

    it('gives the standard normal tail: P(Z > 1.96) ≈ 0.025, P(Z > 0) = 0.5', () => {
      expect(normalSurvival(1.959963984540054)).toBeCloseTo(0.025, 6);
      expect(normalSurvival(0)).toBeCloseTo(0.5, 7);
    });
  });

  describe(mannWhitneyU.name, () => {
    it('finds nothing between two identical samples: U = n1·n2/2, p = 1', () => {
      // Every value tied with its twin: U = 20·20/2 = 200 exactly, |U − mean| − 0.5 clamps to 0.
      expect(mannWhitneyU(oneTo(20), oneTo(20))).toEqual({ u: 200, z: 0, pValue: 1 });
    });

    it('finds two fully separated samples very different: U = 0, p ≈ 6.80e-8', () => {
      // mean 200, variance 20·20·41/12 = 1366.67 (no ties), z = (200 − 0.5)/36.968 = 5.397.
      const result = mannWhitneyU(oneTo(20), oneTo(20).map((x) => x + 100));
      expect(result.u).toBe(0);
      expect(result.z).toBeCloseTo(-5.3965, 3);
      expect(result.pValue / 6.795615128173358e-8).toBeCloseTo(1, 5);
    });

    it('counts ties as one half and corrects the variance for them (shift by 5: U = 287.5, p ≈ 0.0185)', () => {
      // U = Σ_{x=1..15} (x + 4 + ½) + 5·20 = 120 + 60 + 7.5 + 100 = 287.5; 15 ties of two:
      // variance = 400/12 · (41 − 15·6/(40·39)) = 1364.74, z = (87.5 − 0.5)/36.94 = 2.355.
      const result = mannWhitneyU(SHIFTED_BY_5.a, SHIFTED_BY_5.b);
      expect(result.u).toBe(287.5);
      expect(result.pValue).toBeCloseTo(0.01852194627574225, 6);
    });

    it('handles samples made mostly of ties (U = 125, p ≈ 1.31e-4)', () => {
      // U = (3 > 2: 5·10) + ½(2 = 2: 10·10) + ½(3 = 3: 5·10) = 50 + 50 + 25 = 125.
      const result = mannWhitneyU(TIED.a, TIED.b);
      expect(result.u).toBe(125);
      expect(result.pValue / 1.3139252892846386e-4).toBeCloseTo(1, 4);
    });

    it('is two-sided: swapping the samples mirrors U and z and keeps p', () => {
      const forward = mannWhitneyU(SHIFTED_BY_5.a, SHIFTED_BY_5.b);
      const backward = mannWhitneyU(SHIFTED_BY_5.b, SHIFTED_BY_5.a);
      expect(backward.u).toBe(20 * 20 - forward.u);
      expect(backward.z).toBeCloseTo(-forward.z, 12);
      expect(backward.pValue).toBeCloseTo(forward.pValue, 12);
    });

    it('answers p = 1 when every value is the same (zero variance)', () => {
      expect(mannWhitneyU(Array<number>(20).fill(5), Array<number>(25).fill(5)).pValue).toBe(1);
    });

    it('refuses samples too small for the normal approximation, and non-finite values', () => {
      expect(() => mannWhitneyU(oneTo(19), oneTo(40))).toThrow(RangeError);
      expect(() => mannWhitneyU([...oneTo(19), Number.NaN], oneTo(20))).toThrow(RangeError);
    });
  });

  describe(hodgesLehmannShift.name, () => {
    it('is the median of the pairwise differences', () => {
      // (x + 5) − y over x, y in 1..20 is symmetric about 5.
      expect(hodgesLehmannShift(SHIFTED_BY_5.a, SHIFTED_BY_5.b)).toBe(5);
      expect(hodgesLehmannShift(SHIFTED_BY_5.b, SHIFTED_BY_5.a)).toBe(-5);
      // 625 differences; 1 − 2 = 2 − 3 = 3 − 4 = −1 make up the middle.
      expect(hodgesLehmannShift(TIED.a, TIED.b)).toBe(-1);
      expect(hodgesLehmannShift([1, 2, 3], [0])).toBe(2);
    });

    it('is not moved by one huge outlier, unlike a difference of means', () => {
      const b = oneTo(20);
      const a = [...b.slice(0, 19).map((x) => x + 2), 1_000_000];
      expect(hodgesLehmannShift(a, b)).toBeCloseTo(2, 0);
    });
  });

  describe(compareTimings.name, () => {
    it('calls a large, significant difference a leak, slower or faster', () => {
      const slower = compareTimings(oneTo(20).map((x) => x + 100), oneTo(20), CRITERIA);
      expect(slower).toMatchObject({ shift: 100, significant: true, large: true, leak: true });
      expect(slower.relativeShift).toBeCloseTo(100 / 10.5, 10);
      expect(slower.ratioOfMedians).toBeCloseTo(110.5 / 10.5, 10);
      // Faster is as telling as slower to an attacker.
      const faster = compareTimings(oneTo(20), oneTo(20).map((x) => x + 100), CRITERIA);
      expect(faster).toMatchObject({ shift: -100, significant: true, large: true, leak: true });
    });

    it('does not call a significant but tiny difference a leak (0.5 % over 500 samples, p ≈ 1e-93)', () => {
      const baseline = Array.from({ length: 500 }, (_, i) => 100 + (i % 100) / 100);
      const comparison = compareTimings(baseline.map((x) => x + 0.5), baseline, CRITERIA);
      expect(comparison.pValue).toBeLessThan(1e-90);
      expect(comparison.relativeShift).toBeCloseTo(0.5 / 100.495, 6);
      expect(comparison).toMatchObject({ significant: true, large: false, leak: false });
    });

    it('does not call a large but insignificant difference a leak (shift 20 on a spread of 200, p ≈ 0.31)', () => {
      const baseline = oneTo(20).map((x) => 10 * x);
      const comparison = compareTimings(baseline.map((x) => x + 20), baseline, CRITERIA);
      expect(comparison.pValue).toBeCloseTo(0.30999341907445943, 6);
      expect(comparison.relativeShift).toBeCloseTo(20 / 105, 10);
      expect(comparison).toMatchObject({ significant: false, large: true, leak: false });
    });

    it('finds no leak between a sample and itself', () => {
      const sample = oneTo(50).map((x) => 1000 + ((x * 37) % 50));
      expect(compareTimings(sample, [...sample].reverse(), CRITERIA)).toMatchObject({ pValue: 1, shift: 0, ratioOfMedians: 1, leak: false });
    });
  });
});
