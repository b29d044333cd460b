package dev.infersim.queueing;

/**
 * Waiting times of the form P(W > t) = q exp(-theta t): an atom of mass 1 - q at zero and an
 * exponential tail with rate theta. M/M/1, M/M/c (Erlang C) and the continuous-batching chain's
 * admission wait all have this shape (Kleinrock 1975, Vol. 1, ch. 3; Gross, Shortle, Thompson and Harris 2008).
 */
final class ExponentialTail {

    private ExponentialTail() {}

    static double exceedance(double probabilityPositive, double decayRatePerS, double tSeconds) {
        Checks.nonNegative("tSeconds", tSeconds);
        return probabilityPositive * Math.exp(-decayRatePerS * tSeconds);
    }

    /** The p-quantile: zero while the atom at zero covers p, else ln(q / (1 - p)) / theta. */
    static double percentileSeconds(double probabilityPositive, double decayRatePerS, double p) {
        Checks.openUnitInterval("percentile", p);
        if (probabilityPositive <= 1 - p) {
            return 0;
        }
        return Math.log(probabilityPositive / (1 - p)) / decayRatePerS;
    }
}
