package dev.infersim.demo;

import dev.infersim.prediction.EnginePrediction;
import dev.infersim.prediction.FixedPrediction;
import dev.infersim.queueing.AllenCunneenGGc;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.queueing.UnstableQueueException;

import java.util.ArrayList;
import java.util.List;

/** The demo's closed form: the engine's continuous-batching chain, or under fixed timing the M/G/c queue. */
sealed interface DemoPrediction {

    /** The knee: requests per second the deployment completes when always busy. */
    double saturationRatePerS();

    /** The prediction at {@code rate} (Poisson arrivals), in model time; numbers are NaN past saturation. */
    DemoSide at(double rate);

    /** What the prediction is, for the table's legend. */
    String description();

    /** The workload's mean output tokens per request, which turns a token rate into a request rate. */
    double meanOutputTokens();

    /** A point of the prediction's curve. */
    record Point(double rate, DemoSide side) {
    }

    /**
     * The prediction drawn as a curve up to its asymptote: every 5% of the saturation rate to 80%, then closer and
     * closer to it (where latency grows fastest), up to 99.5%. A closed form is cheap, so it need not wait for a sweep.
     */
    default List<Point> curve() {
        double sat = saturationRatePerS();
        List<Point> points = new ArrayList<>();
        for (int k = 1; k <= 16; k++) {
            points.add(new Point(k * 0.05 * sat, at(k * 0.05 * sat)));
        }
        for (double f : new double[] {0.84, 0.88, 0.91, 0.93, 0.95, 0.965, 0.975, 0.985, 0.99, 0.995}) {
            points.add(new Point(f * sat, at(f * sat)));
        }
        return points;
    }

    record Chain(EnginePrediction p) implements DemoPrediction {
        @Override
        public double saturationRatePerS() {
            return p.saturationRatePerS();
        }

        @Override
        public DemoSide at(double rate) {
            try {
                LatencyModel chain = p.at(rate);
                return new DemoSide(1e3 * chain.ttftPercentileSeconds(0.5), 1e3 * chain.ttftPercentileSeconds(0.99),
                        1e3 * chain.meanTpotSeconds(), rate, rate,
                        chain.meanNumberWaiting(), rate, rate, false);
            } catch (UnstableQueueException e) {
                return saturated(p.saturationRatePerS(), rate);
            }
        }

        @Override
        public String description() {
            return "continuous-batching queueing chain";
        }

        @Override
        public double meanOutputTokens() {
            return p.moments().meanOutputTokens();
        }
    }

    /**
     * Fixed timing: TTFT is the M/G/c wait plus the mean first-token latency (exact without jitter or per-token prefill
     * time), TPOT the mean inter-token latency.
     */
    record MgcQueue(FixedPrediction p) implements DemoPrediction {
        @Override
        public double saturationRatePerS() {
            return p.saturationRatePerS();
        }

        @Override
        public DemoSide at(double rate) {
            try {
                AllenCunneenGGc q = p.at(rate, 1);
                double ttftS = p.meanTtftSeconds();
                return new DemoSide(1e3 * (ttftS + FixedPrediction.waitPercentileSeconds(q, 0.5)),
                        1e3 * (ttftS + FixedPrediction.waitPercentileSeconds(q, 0.99)), 1e3 * p.meanItlSeconds(),
                        rate, rate, rate * q.meanWaitSeconds(), rate, rate, false);
            } catch (UnstableQueueException e) {
                return saturated(p.saturationRatePerS(), rate);
            }
        }

        @Override
        public String description() {
            return "M/G/c queue (Allen and Cunneen's wait) over the --max-num-seqs slots";
        }

        @Override
        public double meanOutputTokens() {
            return p.meanOutputTokens();
        }
    }

    /** No stationary numbers: completions at capacity, latencies unknown. */
    private static DemoSide saturated(double sat, double rate) {
        return new DemoSide(Double.NaN, Double.NaN, Double.NaN, sat, sat, Double.NaN, rate, sat, true);
    }
}
