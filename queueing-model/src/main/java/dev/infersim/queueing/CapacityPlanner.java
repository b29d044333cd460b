package dev.infersim.queueing;

import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;
import org.apache.commons.math3.analysis.solvers.BrentSolver;

/**
 * Finds the highest request rate a continuous-batching replica sustains within a latency
 * objective. Each bounded metric grows with the arrival rate, so the admissible rate for it is
 * the root of metric(lambda) = bound on (0, lambda_max), found with Brent's method
 * (R. P. Brent, Algorithms for Minimization without Derivatives, 1973; Commons Math
 * {@link BrentSolver}); the objective's rate is the smallest of these.
 */
public final class CapacityPlanner {

    /** Keeps the bracket strictly inside (0, lambda_max), where the chain is defined. */
    private static final double BRACKET_EDGE = 1e-9;
    private static final int MAX_EVALUATIONS = 500;

    private CapacityPlanner() {}

    /** The highest Poisson arrival rate at which every bound of {@code slo} holds, and the bound that sets it. */
    public static SloCapacity maxRateMeetingSlo(BatchingServer server, Slo slo) {
        return maxRateMeetingSlo(server.saturationRatePerS(), rate -> ContinuousBatchingModel.of(server, rate), slo);
    }

    /**
     * The same for any latency model given at each rate below {@code saturationRatePerS} (a chain whose parameters
     * depend on the rate, or one request at a time).
     */
    public static SloCapacity maxRateMeetingSlo(double saturationRatePerS,
            DoubleFunction<? extends LatencyModel> chainAt, Slo slo) {
        SloCapacity capacity = new SloCapacity(saturationRatePerS, SloMetric.SATURATION);
        double p = slo.queueingDelayPercentile();
        capacity = tighter(capacity, rateWithin(saturationRatePerS, chainAt, SloMetric.QUEUEING_DELAY_PERCENTILE,
                chain -> chain.queueingDelayPercentileSeconds(p), slo.maxQueueingDelaySeconds()));
        capacity = tighter(capacity, rateWithin(saturationRatePerS, chainAt, SloMetric.MEAN_TPOT,
                LatencyModel::meanTpotSeconds, slo.maxMeanTpotSeconds()));
        return tighter(capacity, rateWithin(saturationRatePerS, chainAt, SloMetric.MEAN_TTFT,
                LatencyModel::meanTtftSeconds, slo.maxMeanTtftSeconds()));
    }

    /** The highest rate keeping one metric within its bound, or saturation if it never binds. */
    private static SloCapacity rateWithin(double saturation, DoubleFunction<? extends LatencyModel> chainAt,
            SloMetric metric, ToDoubleFunction<LatencyModel> measure, double bound) {
        if (Double.isInfinite(bound)) {
            return new SloCapacity(saturation, SloMetric.SATURATION);
        }
        double low = saturation * BRACKET_EDGE;
        double high = saturation * (1 - BRACKET_EDGE);
        if (measure.applyAsDouble(chainAt.apply(low)) > bound) {
            return new SloCapacity(0, metric);
        }
        if (measure.applyAsDouble(chainAt.apply(high)) <= bound) {
            return new SloCapacity(saturation, SloMetric.SATURATION);
        }
        double root = new BrentSolver(1e-14, saturation * 1e-13).solve(MAX_EVALUATIONS,
                rate -> measure.applyAsDouble(chainAt.apply(rate)) - bound, low, high);
        return new SloCapacity(root, metric);
    }

    private static SloCapacity tighter(SloCapacity current, SloCapacity candidate) {
        return candidate.maxRatePerS() < current.maxRatePerS() ? candidate : current;
    }
}
