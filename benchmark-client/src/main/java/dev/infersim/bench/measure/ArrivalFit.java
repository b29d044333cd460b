package dev.infersim.bench.measure;

import org.apache.commons.math3.distribution.ExponentialDistribution;
import org.apache.commons.math3.distribution.GammaDistribution;
import org.apache.commons.math3.distribution.RealDistribution;
import org.apache.commons.math3.stat.inference.KolmogorovSmirnovTest;

import java.util.Arrays;
import java.util.Locale;

/**
 * Whether requests went out as the requested arrival process says: the rate and the distribution of the gaps between
 * the actual send instants, against a renewal process at {@code rate} whose gaps are gamma with shape
 * {@code burstiness} (vLLM's {@code --burstiness}: 1 is Poisson, exponential gaps; infinity is evenly spaced).
 * <ul>
 *   <li>Rate: (n - 1) over the span of the sends, off the requested rate by more than {@value #RATE_TOLERANCE} or three
 *   standard errors of a rate from n - 1 gaps of the requested coefficient of variation (1 / sqrt(burstiness)),
 *   whichever is more: a short Poisson run misses its nominal rate by chance, a client that cannot keep pace by far.</li>
 *   <li>Gaps: rejected by a one-sample Kolmogorov-Smirnov test (Commons Math) against the requested gap law at
 *   significance {@value #ALPHA} (so a correct client is flagged in one run of a thousand); for evenly spaced
 *   arrivals, which no continuous law describes, gaps whose coefficient of variation exceeds {@value #CONSTANT_CV}.
 *   Judged from {@value #MIN_GAPS} gaps.</li>
 * </ul>
 *
 * @param sends         send instants judged
 * @param requestedRate requests per second asked for
 * @param achievedRate  (n - 1) over the span of the sends, requests per second; NaN under two sends
 * @param tolerance     the relative rate difference above which the rate is off
 * @param ksD           Kolmogorov-Smirnov distance of the gaps from the requested law; NaN when not tested
 * @param ksP           its p-value; NaN when not tested
 * @param ksPAtAchievedRate the p-value against the requested law at the achieved mean gap: at or above the
 *                      significance when only the rate is off; NaN when not tested
 * @param gapCv         coefficient of variation of the gaps; NaN under two gaps
 * @param rateOff       whether the achieved rate is off the requested one
 * @param gapsOff       whether the gaps are not the requested law's
 */
public record ArrivalFit(int sends, double requestedRate, double burstiness, double achievedRate, double tolerance,
                         double ksD, double ksP, double ksPAtAchievedRate, double gapCv, boolean rateOff,
                         boolean gapsOff) {
    static final double RATE_TOLERANCE = 0.05;
    public static final double ALPHA = 0.001;
    public static final double CONSTANT_CV = 0.5;
    static final int MIN_GAPS = 20;

    /**
     * Tests send instants against the requested process.
     *
     * @param sendNanos     actual send instants, any order (sorted here, in place)
     * @param count         how many of {@code sendNanos} hold instants
     * @param requestedRate requests per second asked for (finite, positive)
     * @param burstiness    gamma shape of the gaps asked for (positive; infinity for evenly spaced)
     */
    public static ArrivalFit test(long[] sendNanos, int count, double requestedRate, double burstiness) {
        Arrays.sort(sendNanos, 0, count);
        double[] gapsS = new double[Math.max(0, count - 1)];
        for (int i = 1; i < count; i++) {
            gapsS[i - 1] = (sendNanos[i] - sendNanos[i - 1]) / 1e9;
        }
        return ofGaps(gapsS, count < 2 ? 0 : (sendNanos[count - 1] - sendNanos[0]) / 1e9, requestedRate, burstiness);
    }

    /** Tests arrival instants in milliseconds, sorted, against the requested process; see {@link #test}. */
    public static ArrivalFit ofSortedMs(double[] sortedMs, double requestedRate, double burstiness) {
        int n = sortedMs.length;
        double[] gapsS = new double[Math.max(0, n - 1)];
        for (int i = 1; i < n; i++) {
            gapsS[i - 1] = (sortedMs[i] - sortedMs[i - 1]) / 1e3;
        }
        return ofGaps(gapsS, n < 2 ? 0 : (sortedMs[n - 1] - sortedMs[0]) / 1e3, requestedRate, burstiness);
    }

    /** @param spanS the time from the first arrival to the last, s */
    private static ArrivalFit ofGaps(double[] gapsS, double spanS, double requestedRate, double burstiness) {
        int count = gapsS.length + 1;
        double achieved = spanS > 0 ? (count - 1) / spanS : Double.NaN;
        double askedCv = Double.isInfinite(burstiness) ? 0 : 1 / Math.sqrt(burstiness);
        double tolerance = Math.max(RATE_TOLERANCE, gapsS.length == 0 ? 1 : 3 * askedCv / Math.sqrt(gapsS.length));
        boolean rateOff = Math.abs(achieved / requestedRate - 1) > tolerance;
        double cv = cv(gapsS);
        double d = Double.NaN;
        double p = Double.NaN;
        double pAtAchieved = Double.NaN;
        boolean gapsOff = false;
        if (gapsS.length >= MIN_GAPS) {
            if (Double.isInfinite(burstiness)) {
                gapsOff = cv > CONSTANT_CV;
            } else {
                RealDistribution law = gapLaw(requestedRate, burstiness);
                KolmogorovSmirnovTest ks = new KolmogorovSmirnovTest();
                d = ks.kolmogorovSmirnovStatistic(law, gapsS);
                p = ks.kolmogorovSmirnovTest(law, gapsS);
                gapsOff = p < ALPHA;
                pAtAchieved = achieved > 0 ? ks.kolmogorovSmirnovTest(gapLaw(achieved, burstiness), gapsS) : Double.NaN;
            }
        }
        return new ArrivalFit(count, requestedRate, burstiness, achieved, tolerance, d, p, pAtAchieved, cv, rateOff,
                gapsOff);
    }

    /** Gaps in seconds: exponential at {@code rate} for burstiness 1, else gamma of that shape with mean 1 / rate. */
    static RealDistribution gapLaw(double rate, double burstiness) {
        if (burstiness == 1) {
            return new ExponentialDistribution(null, 1 / rate);
        }
        return new GammaDistribution(null, burstiness, 1 / (rate * burstiness),
                GammaDistribution.DEFAULT_INVERSE_ABSOLUTE_ACCURACY);
    }

    static double cv(double[] x) {
        if (x.length < 2) {
            return Double.NaN;
        }
        double mean = Arrays.stream(x).average().orElse(0);
        double var = Arrays.stream(x).map(v -> (v - mean) * (v - mean)).sum() / (x.length - 1);
        return mean > 0 ? Math.sqrt(var) / mean : Double.NaN;
    }

    /** Whether the sends were not the requested process. */
    public boolean off() {
        return rateOff || gapsOff;
    }

    /** Whether the gaps could be tested at all (enough sends). */
    public boolean judged() {
        return sends - 1 >= MIN_GAPS;
    }

    /** What was found, in one sentence with its figures. */
    public String describe() {
        if (Double.isNaN(achievedRate)) {
            return String.format(Locale.ROOT, "%d sends, too few to judge the rate or the gaps", sends);
        }
        String law = Double.isInfinite(burstiness) ? "evenly spaced" : burstiness == 1 ? "Poisson"
                : String.format(Locale.ROOT, "gamma (burstiness %s)", burstiness);
        String rate = String.format(Locale.ROOT, "sent at %.2f req/s against %.2f requested (%+.1f%%, tolerance %.1f%% "
                + "over %d sends)", achievedRate, requestedRate, 100 * (achievedRate / requestedRate - 1),
                100 * tolerance, sends);
        String gaps = Double.isInfinite(burstiness)
                ? String.format(Locale.ROOT, "gap coefficient of variation %.2f (limit %.2f)", gapCv, CONSTANT_CV)
                : Double.isNaN(ksP) ? "too few sends to test the gaps"
                : String.format(Locale.ROOT, "gaps against %s: Kolmogorov-Smirnov D = %.3f, p = %.2g (rejected "
                        + "below %s)", law, ksD, ksP, ALPHA);
        return rate + "; " + gaps;
    }
}
