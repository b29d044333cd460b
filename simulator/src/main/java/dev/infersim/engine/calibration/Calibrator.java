package dev.infersim.engine.calibration;

import dev.infersim.engine.BatchShape;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.engine.profile.Precision;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.common.ConfigException;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresBuilder;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresOptimizer;
import org.apache.commons.math3.fitting.leastsquares.LevenbergMarquardtOptimizer;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.RealMatrix;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.stat.descriptive.rank.Median;
import org.apache.commons.math3.util.Pair;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fits one GPU profile's efficiency factors and overheads to measured step times of any number of models by nonlinear
 * least squares (Levenberg-Marquardt, Commons Math) on relative errors, so short and long steps weigh alike.
 *
 * <p>Only factors the data can see are fitted: the FP8 factors need FP8 rows, the mixture-of-experts factors MoE rows,
 * the all-reduce factors rows at tensor parallelism above 1; factors named as held keep the starting profile's values.
 * Fractions are fitted through a logit and the rest through a log, which keeps them in range without bounds, and a weak
 * pull toward the starting profile keeps factors the data barely sees (the per-step against the per-layer overhead,
 * for models of similar depth) where they were.
 */
public final class Calibrator {
    private static final double PRIOR_WEIGHT = 1e-3;
    private static final List<String> FP8_FACTORS = List.of("fp8_compute_efficiency_max", "fp8_layer_overhead_us");
    private static final List<String> MOE_FACTORS = List.of("moe_gemm_efficiency", "moe_bandwidth_efficiency",
            "moe_layer_overhead_us");
    private static final List<String> ALL_REDUCE_FACTORS = List.of("interconnect_efficiency", "all_reduce_latency_us",
            "small_all_reduce_efficiency", "small_all_reduce_latency_us", "all_reduce_hop_latency_us");

    /**
     * One measurement on a deployment (model, weight dtype, tensor parallelism; its GPU is replaced by the candidate).
     * Phases: {@code prefill} (one prompt of newTokens after contextTokens), {@code decode} (batch sequences, one token
     * each, over contextTokens cached tokens), {@code mixed} (batch decodes plus one fresh prefill chunk, newTokens in
     * all) and {@code allreduce} (one all-reduce of newTokens activations). A {@code shard} step is one GPU's part of a
     * tensor-parallel step timed alone, on one GPU: the layers' all-reduces are not in it.
     */
    public record Measurement(Deployment deployment, String phase, int batch, int contextTokens, int newTokens,
                              double measuredMs, boolean shard) {
        public static final List<String> PHASES = List.of("prefill", "decode", "mixed", "allreduce");

        /** A measurement of the whole step, all-reduces included. */
        public Measurement(Deployment deployment, String phase, int batch, int contextTokens, int newTokens, double measuredMs) {
            this(deployment, phase, batch, contextTokens, newTokens, measuredMs, false);
        }

        public Measurement {
            ConfigException.check(PHASES.contains(phase), "phase must be one of %s, got '%s'", PHASES, phase);
            ConfigException.check(measuredMs > 0, "measured_ms must be > 0, got %s", measuredMs);
            ConfigException.check(newTokens >= 1 && contextTokens >= 0, "new_tokens must be >= 1 and context_tokens >= 0");
            ConfigException.check(batch >= (phase.equals("mixed") ? 0 : 1), "batch must be >= 1");
            ConfigException.check(!phase.equals("mixed") || newTokens > batch, "a mixed step needs new_tokens > batch");
            ConfigException.check(!phase.equals("allreduce") || deployment.tensorParallelSize() > 1,
                    "an allreduce row needs tp > 1");
            ConfigException.check(!shard || !phase.equals("allreduce"), "an allreduce row cannot be a shard");
        }

        public boolean isAllReduce() {
            return phase.equals("allreduce");
        }

        /** The step's shape (not for all-reduce rows). */
        public BatchShape shape() {
            BatchShape s = new BatchShape();
            switch (phase) {
                case "prefill" -> s.addPrefill(newTokens, contextTokens, true);
                case "decode" -> addDecodes(s, batch);
                case "mixed" -> addDecodes(s, batch).addPrefill(newTokens - batch, 0, true);
                default -> throw new IllegalStateException("an all-reduce has no step shape");
            }
            return s;
        }

        private BatchShape addDecodes(BatchShape s, int n) {
            for (int i = 0; i < n; i++) {
                s.addDecode(contextTokens);
            }
            return s;
        }

        /** model dtype tp, the group a measurement is reported in. */
        public String group() {
            return deployment.model().name() + " " + deployment.dtype().name().toLowerCase() + " tp" + deployment.tensorParallelSize()
                    + (shard ? " shard" : "");
        }
    }

    /** The fitted profile, the factors that were fitted, and the relative error of every measurement before and after. */
    public record Result(GpuProfile fitted, List<String> fittedFactors, double[] errorsBefore, double[] errorsAfter,
                         int iterations) {
    }

    private Calibrator() {
    }

    /** Fits {@code start}'s factors to {@code data}, holding the factors named in {@code held}. */
    public static Result fit(GpuProfile start, List<Measurement> data, Set<String> held) {
        ConfigException.check(data.size() >= 3, "calibration needs at least 3 measurements, got %d", data.size());
        for (String h : held) {
            ConfigException.check(GpuProfile.FACTORS.contains(h), "unknown factor '%s'; factors: %s", h, GpuProfile.FACTORS);
        }
        int[] fitted = fittedIndices(data, held);
        double[] base = start.factors();
        double[] u0 = encode(base, fitted);
        int n = data.size();
        RealVector target = new ArrayRealVector(n + u0.length);
        for (int k = 0; k < u0.length; k++) {
            target.setEntry(n + k, PRIOR_WEIGHT * u0[k]);
        }
        LeastSquaresOptimizer.Optimum optimum = new LevenbergMarquardtOptimizer().optimize(new LeastSquaresBuilder()
                .start(u0)
                .target(target)
                .model(u -> evaluate(start, base, fitted, data, u))
                .maxEvaluations(5000)
                .maxIterations(1000)
                .build());
        GpuProfile result = start.withFactors(decode(base, fitted, optimum.getPoint().toArray()));
        List<String> names = new ArrayList<>();
        for (int i : fitted) {
            names.add(GpuProfile.FACTORS.get(i));
        }
        return new Result(result, names, errors(start, data), errors(result, data), optimum.getIterations());
    }

    /** Predicted milliseconds of each measurement on {@code gpu}. */
    public static double[] predictedMs(GpuProfile gpu, List<Measurement> data) {
        Map<Deployment, RooflineCostModel> costs = new IdentityHashMap<>();
        double[] ms = new double[data.size()];
        for (int i = 0; i < ms.length; i++) {
            Measurement m = data.get(i);
            RooflineCostModel cost = costs.computeIfAbsent(m.deployment(), d -> new RooflineCostModel(d.toBuilder().gpu(gpu).build()));
            if (m.isAllReduce()) {
                ms[i] = cost.allReduceSeconds(m.newTokens()) * 1e3;
            } else {
                BatchShape shape = m.shape();
                ms[i] = cost.stepNanos(shape) / 1e6 - (m.shard() ? cost.collectiveSeconds(shape) * 1e3 : 0);
            }
        }
        return ms;
    }

    /** Relative error (predicted / measured - 1) of each measurement on {@code gpu}. */
    public static double[] errors(GpuProfile gpu, List<Measurement> data) {
        double[] e = predictedMs(gpu, data);
        for (int i = 0; i < e.length; i++) {
            e[i] = e[i] / data.get(i).measuredMs() - 1;
        }
        return e;
    }

    /** Median of the absolute values. */
    public static double medianAbs(double[] errors) {
        return new Median().evaluate(Arrays.stream(errors).map(Math::abs).toArray());
    }

    /** Largest absolute value. */
    public static double maxAbs(double[] errors) {
        return Arrays.stream(errors).map(Math::abs).max().orElse(0);
    }

    private static int[] fittedIndices(List<Measurement> data, Set<String> held) {
        boolean fp8 = data.stream().anyMatch(m -> m.deployment().dtype() == Precision.FP8);
        boolean moe = data.stream().anyMatch(m -> m.deployment().model().isMoe());
        boolean parallel = data.stream().anyMatch(m -> m.deployment().tensorParallelSize() > 1 && !m.shard());
        boolean beyondTwo = data.stream().anyMatch(m -> m.deployment().tensorParallelSize() > 2 && !m.shard());
        boolean steps = data.stream().anyMatch(m -> !m.isAllReduce());
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < GpuProfile.FACTORS.size(); i++) {
            String f = GpuProfile.FACTORS.get(i);
            boolean seen = FP8_FACTORS.contains(f) ? fp8 && steps
                    : MOE_FACTORS.contains(f) ? moe && steps
                    : f.equals("all_reduce_hop_latency_us") ? beyondTwo
                    : ALL_REDUCE_FACTORS.contains(f) ? parallel
                    : steps;
            if (seen && !held.contains(f)) {
                out.add(i);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Pair<RealVector, RealMatrix> evaluate(GpuProfile start, double[] base, int[] fitted,
                                                         List<Measurement> data, RealVector point) {
        double[] u = point.toArray();
        double[] value = residuals(start, base, fitted, data, u);
        double[][] jacobian = new double[value.length][u.length];
        for (int k = 0; k < u.length; k++) {
            double h = 1e-6 * Math.max(1, Math.abs(u[k]));
            double[] shifted = u.clone();
            shifted[k] += h;
            double[] v = residuals(start, base, fitted, data, shifted);
            for (int i = 0; i < value.length; i++) {
                jacobian[i][k] = (v[i] - value[i]) / h;
            }
        }
        return new Pair<>(new ArrayRealVector(value, false), new Array2DRowRealMatrix(jacobian, false));
    }

    private static double[] residuals(GpuProfile start, double[] base, int[] fitted, List<Measurement> data, double[] u) {
        double[] e = errors(start.withFactors(decode(base, fitted, u)), data);
        double[] r = Arrays.copyOf(e, e.length + u.length);
        for (int k = 0; k < u.length; k++) {
            r[e.length + k] = PRIOR_WEIGHT * u[k];
        }
        return r;
    }

    private static double[] encode(double[] factors, int[] fitted) {
        double[] u = new double[fitted.length];
        for (int k = 0; k < fitted.length; k++) {
            double x = factors[fitted[k]];
            u[k] = GpuProfile.isFraction(GpuProfile.FACTORS.get(fitted[k]))
                    ? Math.log(Math.max(x, 1e-3) / (1 - Math.min(x, 0.999)))
                    : Math.log(Math.max(x, 1e-3));
        }
        return u;
    }

    private static double[] decode(double[] base, int[] fitted, double[] u) {
        double[] factors = base.clone();
        for (int k = 0; k < fitted.length; k++) {
            factors[fitted[k]] = GpuProfile.isFraction(GpuProfile.FACTORS.get(fitted[k])) ? 1 / (1 + Math.exp(-u[k])) : Math.exp(u[k]);
        }
        return factors;
    }
}
