package dev.infersim.queueing;

import org.apache.commons.math3.analysis.integration.gauss.GaussIntegrator;
import org.apache.commons.math3.analysis.solvers.BrentSolver;
import org.apache.commons.math3.analysis.integration.gauss.GaussIntegratorFactory;
import org.apache.commons.math3.special.Gamma;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;

/**
 * How many requests arrive in a window of t seconds, for arrivals at rate lambda whose gaps are gamma distributed with
 * squared coefficient of variation ca^2 (shape k = 1 / ca^2; vLLM's {@code --burstiness} is k, and k = 1 is Poisson).
 * With S_m the sum of m gaps, F_m its distribution function (gamma of shape m k, rate k lambda) and N_o the count of
 * an ordinary renewal process started at an arrival:
 * <ul>
 *   <li>after an arrival: P(N_o(t) >= n) = F_n(t);</li>
 *   <li>from a random time (the equilibrium process): P(N(t) >= n) = lambda (G_{n-1}(t) - G_n(t)), G_m(t) the integral
 *       of F_m over (0, t), since d/dt P(N(t) >= n) = lambda P(N_o(t) = n - 1); G_0(t) = t and, for m >= 1,
 *       G_m(t) = t F_m(t) - (m / lambda) F^+_m(t), F^+_m the gamma of shape m k + 1;</li>
 *   <li>around an arrival at a uniform position u of the window: the others are N_o(u t) before it and an independent
 *       N_o((1 - u) t) after it (renewal: both sides start afresh at the arrival), mixed over u by Gauss-Legendre.</li>
 * </ul>
 * Each fills a distribution on 0..length-1 whose last cell holds the rest of the tail. Poisson arrivals take the
 * Poisson law in all three. For gamma gaps the laws are computed exactly at window lengths 2% apart and mixed linearly
 * in between, so a model that asks for thousands of windows evaluates the gamma functions a few hundred times.
 *
 * <p>Source: D. R. Cox, Renewal Theory (Methuen, 1962), ch. 3 and 7.2 (counts of ordinary and equilibrium processes).
 */
final class ArrivalCounts {
    private static final GaussIntegrator POSITIONS = new GaussIntegratorFactory().legendre(8, 0, 1);
    /** Gaps smoother than this (ca^2 = 0 is a regular clock) are counted as gamma gaps of this ca^2. */
    private static final double MIN_SCV = 1e-4;
    /** Halvings of the bracket below 1 before sigma is taken as 1 less rounding (about 2^-60 of 1 - rho). */
    private static final int MAX_HALVINGS = 60;
    /** A tail probability below which counts are not followed further. */
    private static final double NEGLIGIBLE = 1e-13;

    /** Window lengths of the exact laws: TABLE_START_SECONDS * TABLE_RATIO^i. */
    private static final double TABLE_START_SECONDS = 1e-6;
    private static final double TABLE_RATIO = 1.02;
    /** Longest count kept in a tabulated law; the rest of the tail is held by its last cell. */
    private static final int TABLE_COUNTS = 257;

    private final double ratePerS;
    private final double shape;
    private final boolean poisson;
    /** [kind][i]: the exact law at the i-th window length; built on use. */
    private final Map<Integer, double[]>[] tables;

    ArrivalCounts(double ratePerS, double arrivalScv) {
        this.ratePerS = ratePerS;
        this.shape = 1 / Math.max(arrivalScv, MIN_SCV);
        this.poisson = arrivalScv == 1;
        @SuppressWarnings("unchecked")
        Map<Integer, double[]>[] byKind = new Map[Kind.values().length];
        for (int k = 0; k < byKind.length; k++) {
            byKind[k] = new HashMap<>();
        }
        this.tables = byKind;
    }

    private enum Kind { RANDOM_TIME, AFTER_ARRIVAL, AROUND_ARRIVAL }

    /** Arrivals in a window that starts at a random time. */
    void fromRandomTimeInto(double seconds, double[] into) {
        lawInto(Kind.RANDOM_TIME, seconds, into);
    }

    /** Arrivals in a window of this length that starts at an arrival, the arrival itself not counted. */
    void afterArrivalInto(double seconds, double[] into) {
        lawInto(Kind.AFTER_ARRIVAL, seconds, into);
    }

    /** The other arrivals in a window of this length that holds an arrival at a uniformly distributed position. */
    void aroundArrivalInto(double seconds, double[] into) {
        lawInto(Kind.AROUND_ARRIVAL, seconds, into);
    }

    /**
     * sigma of GI/M/1 for these gaps and an exponential server of rate mu: the root in (0, 1) of
     * sigma = A*(mu (1 - sigma)), A*(s) = (1 + s / (k lambda))^{-k} the gaps' transform, k = 1 / ca^2. An arrival finds
     * the server busy with probability sigma (rho = lambda / mu for Poisson arrivals, more for bursty ones), and the
     * queue's tail is geometric with ratio sigma (Kleinrock 1975, Vol. 1, ch. 6).
     */
    static double busyRoot(double ratePerS, double arrivalScv, double serviceRatePerS) {
        double k = 1 / Math.max(arrivalScv, MIN_SCV);
        double rho = ratePerS / serviceRatePerS;
        DoubleUnaryOperator f =
                sigma -> sigma - Math.pow(1 + serviceRatePerS * (1 - sigma) / (k * ratePerS), -k);
        // f > 0 just below 1 when rho < 1; within rounding of saturation no double below 1 shows it, and the queue
        // is as good as unstable: sigma is then the largest double below 1 the search reached
        double gap = 1e-3 * (1 - rho);
        for (int i = 0; i < MAX_HALVINGS && !(f.applyAsDouble(1 - gap) > 0); i++) {
            gap /= 2;
        }
        if (!(f.applyAsDouble(1 - gap) > 0)) {
            return 1 - Math.max(gap, Math.ulp(1.0));
        }
        return new BrentSolver(1e-15, 1e-14).solve(500, f::applyAsDouble, 0, 1 - gap);
    }

    /** V(t), the variance of the arrivals in a window of t that starts at a random time (lambda t for Poisson). */
    double countVariance(double seconds) {
        if (poisson) {
            return ratePerS * seconds;
        }
        double[] law = new double[TABLE_COUNTS];
        fromRandomTimeInto(seconds, law);
        double mean = 0;
        double square = 0;
        for (int n = 0; n < law.length; n++) {
            mean += n * law[n];
            square += (double) n * n * law[n];
        }
        return square - mean * mean;
    }

    private void lawInto(Kind kind, double seconds, double[] into) {
        Arrays.fill(into, 0);
        if (poisson) {
            poissonInto(ratePerS * seconds, into);
            return;
        }
        if (seconds <= TABLE_START_SECONDS) {
            into[0] = 1;
            return;
        }
        int i = (int) (Math.log(seconds / TABLE_START_SECONDS) / Math.log(TABLE_RATIO));
        double from = TABLE_START_SECONDS * Math.pow(TABLE_RATIO, i);
        double f = Math.max(0, Math.min(1, (seconds - from) / (from * (TABLE_RATIO - 1)))); // linear in t keeps the mean lambda t
        double[] lower = table(kind, i);
        double[] upper = table(kind, i + 1);
        for (int m = 0; m < TABLE_COUNTS; m++) {
            into[Math.min(m, into.length - 1)] += (1 - f) * lower[m] + f * upper[m];
        }
    }

    private double[] table(Kind kind, int i) {
        return tables[kind.ordinal()].computeIfAbsent(i, key -> {
            double seconds = TABLE_START_SECONDS * Math.pow(TABLE_RATIO, key);
            double[] law = new double[TABLE_COUNTS];
            switch (kind) {
                case RANDOM_TIME -> exactFromRandomTime(seconds, law);
                case AFTER_ARRIVAL -> exactAfterArrival(seconds, law);
                default -> exactAroundArrival(seconds, law);
            }
            return law;
        });
    }

    private void exactFromRandomTime(double seconds, double[] into) {
        double previous = 1; // P(N >= 0)
        double integralBefore = seconds; // G_0
        for (int n = 1; n < into.length && previous > NEGLIGIBLE; n++) {
            double integral = integralOfSumCdf(n, seconds);
            double atLeast = Math.max(0, Math.min(previous, ratePerS * (integralBefore - integral)));
            into[n - 1] = previous - atLeast;
            previous = atLeast;
            integralBefore = integral;
        }
        into[into.length - 1] += previous;
    }

    private void exactAfterArrival(double seconds, double[] into) {
        Arrays.fill(into, 0);
        double previous = 1;
        for (int n = 1; n < into.length && previous > NEGLIGIBLE; n++) {
            double atLeast = Math.min(previous, sumCdf(n, seconds));
            into[n - 1] = previous - atLeast;
            previous = atLeast;
        }
        into[into.length - 1] += previous;
    }

    private void exactAroundArrival(double seconds, double[] into) {
        double[] before = new double[into.length];
        double[] after = new double[into.length];
        for (int i = 0; i < POSITIONS.getNumberOfPoints(); i++) {
            double u = POSITIONS.getPoint(i);
            exactAfterArrival(u * seconds, before);
            exactAfterArrival((1 - u) * seconds, after);
            double w = POSITIONS.getWeight(i);
            int beforeEnd = support(before);
            int afterEnd = support(after);
            for (int a = 0; a < beforeEnd; a++) {
                for (int b = 0; b < afterEnd; b++) {
                    into[Math.min(into.length - 1, a + b)] += w * before[a] * after[b];
                }
            }
        }
    }

    /** One past the last non-zero cell. */
    private static int support(double[] law) {
        int end = law.length;
        while (end > 1 && law[end - 1] == 0) {
            end--;
        }
        return end;
    }

    /** F_m(t) = P(S_m <= t). */
    private double sumCdf(int m, double seconds) {
        return seconds <= 0 ? 0 : Gamma.regularizedGammaP(m * shape, shape * ratePerS * seconds);
    }

    /** G_m(t), the integral of F_m over (0, t). */
    private double integralOfSumCdf(int m, double seconds) {
        if (seconds <= 0) {
            return 0;
        }
        double x = shape * ratePerS * seconds;
        return seconds * Gamma.regularizedGammaP(m * shape, x) - m / ratePerS * Gamma.regularizedGammaP(m * shape + 1, x);
    }

    /** Poisson(mean) probabilities of 0..length-1, the last holding the rest of the tail. */
    static void poissonInto(double mean, double[] into) {
        double p = Math.exp(-mean);
        double sum = 0;
        for (int k = 0; k < into.length - 1; k++) {
            into[k] = p;
            sum += p;
            p *= mean / (k + 1);
        }
        into[into.length - 1] = Math.max(0, 1 - sum);
    }
}
