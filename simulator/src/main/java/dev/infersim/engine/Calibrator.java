package dev.infersim.engine;

import org.apache.commons.math3.fitting.leastsquares.LeastSquaresBuilder;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresOptimizer;
import org.apache.commons.math3.fitting.leastsquares.LevenbergMarquardtOptimizer;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.util.Pair;

import java.util.List;

/**
 * Fits a GPU profile's efficiency factors and overheads to measured step times by nonlinear least squares
 * (Levenberg-Marquardt, Commons Math) on relative errors, so short and long steps weigh alike.
 *
 * <p>Seven factors are fitted: GEMM and attention bandwidth efficiency, maximum GEMM compute efficiency, the GEMM
 * half-efficiency token count, attention compute efficiency, the per-step overhead and the per-sequence overhead.
 * The per-layer overhead is held at the profile's value because for one model it is indistinguishable from the per-step
 * overhead. Fractions are fitted through a logit and the rest through a log, which keeps them in range without bounds,
 * and a weak pull toward the starting profile keeps factors the data cannot see where they were.
 */
public final class Calibrator {
    private static final int[] FITTED = {0, 1, 2, 3, 4, 5, 7}; // indices into GpuProfile.factors()
    private static final boolean[] FRACTION = {true, true, true, false, true, false, false};
    private static final double PRIOR_WEIGHT = 1e-3;

    /** One measured step: its shape and the time a real engine took. */
    public record Measurement(BatchShape shape, double measuredMs) {
        public Measurement {
            if (!(measuredMs > 0)) {
                throw new ConfigException("measured_ms must be > 0, got " + measuredMs);
            }
        }
    }

    /** The fitted profile and the relative error (RMS and worst case) of the model before and after fitting. */
    public record Result(GpuProfile fitted, double rmsErrorBefore, double maxErrorBefore, double rmsErrorAfter,
                         double maxErrorAfter, int iterations) {
    }

    private Calibrator() {
    }

    public static Result fit(Deployment deployment, List<Measurement> data) {
        ConfigException.check(data.size() >= 3, "calibration needs at least 3 measurements, got %d", data.size());
        GpuProfile start = deployment.gpu();
        double[] base = start.factors();
        double[] u0 = encode(base);
        int n = data.size();
        RealVector target = new ArrayRealVector(n + u0.length);
        for (int i = 0; i < n; i++) {
            target.setEntry(i, 0.0);
        }
        for (int k = 0; k < u0.length; k++) {
            target.setEntry(n + k, PRIOR_WEIGHT * u0[k]);
        }
        LeastSquaresOptimizer.Optimum optimum = new LevenbergMarquardtOptimizer().optimize(new LeastSquaresBuilder()
                .start(u0)
                .target(target)
                .model(u -> evaluate(deployment, base, data, u))
                .maxEvaluations(2000)
                .maxIterations(500)
                .build());
        GpuProfile fitted = start.withFactors(decode(base, optimum.getPoint().toArray()));
        double[] before = errors(deployment, data);
        double[] after = errors(deployment.toBuilder().gpu(fitted).build(), data);
        return new Result(fitted, rms(before), maxAbs(before), rms(after), maxAbs(after), optimum.getIterations());
    }

    /** Relative error (predicted / measured - 1) of each measurement under the deployment's own profile. */
    public static double[] errors(Deployment deployment, List<Measurement> data) {
        RooflineCostModel cost = new RooflineCostModel(deployment);
        double[] e = new double[data.size()];
        for (int i = 0; i < e.length; i++) {
            e[i] = cost.stepNanos(data.get(i).shape()) / 1e6 / data.get(i).measuredMs() - 1;
        }
        return e;
    }

    private static Pair<RealVector, org.apache.commons.math3.linear.RealMatrix> evaluate(
            Deployment deployment, double[] base, List<Measurement> data, RealVector point) {
        double[] u = point.toArray();
        double[] value = residuals(deployment, base, data, u);
        double[][] jacobian = new double[value.length][u.length];
        for (int k = 0; k < u.length; k++) {
            double h = 1e-6 * Math.max(1, Math.abs(u[k]));
            double[] shifted = u.clone();
            shifted[k] += h;
            double[] v = residuals(deployment, base, data, shifted);
            for (int i = 0; i < value.length; i++) {
                jacobian[i][k] = (v[i] - value[i]) / h;
            }
        }
        return new Pair<>(new ArrayRealVector(value, false), new Array2DRowRealMatrix(jacobian, false));
    }

    private static double[] residuals(Deployment deployment, double[] base, List<Measurement> data, double[] u) {
        Deployment candidate = deployment.toBuilder().gpu(deployment.gpu().withFactors(decode(base, u))).build();
        double[] e = errors(candidate, data);
        double[] r = new double[e.length + u.length];
        System.arraycopy(e, 0, r, 0, e.length);
        for (int k = 0; k < u.length; k++) {
            r[e.length + k] = PRIOR_WEIGHT * u[k];
        }
        return r;
    }

    private static double[] encode(double[] factors) {
        double[] u = new double[FITTED.length];
        for (int k = 0; k < FITTED.length; k++) {
            double x = factors[FITTED[k]];
            u[k] = FRACTION[k] ? Math.log(x / (1 - Math.min(x, 0.999))) : Math.log(Math.max(x, 1e-3));
        }
        return u;
    }

    private static double[] decode(double[] base, double[] u) {
        double[] factors = base.clone();
        for (int k = 0; k < FITTED.length; k++) {
            factors[FITTED[k]] = FRACTION[k] ? 1 / (1 + Math.exp(-u[k])) : Math.exp(u[k]);
        }
        return factors;
    }

    private static double rms(double[] e) {
        double s = 0;
        for (double x : e) {
            s += x * x;
        }
        return Math.sqrt(s / e.length);
    }

    private static double maxAbs(double[] e) {
        double m = 0;
        for (double x : e) {
            m = Math.max(m, Math.abs(x));
        }
        return m;
    }
}
