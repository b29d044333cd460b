package dev.infersim.queueing;

import org.apache.commons.math3.linear.SingularMatrixException;
import org.apache.commons.math3.stat.regression.OLSMultipleLinearRegression;
import org.apache.commons.math3.stat.regression.SimpleRegression;

/**
 * Fits the linear {@link IterationTime} model to observed engine steps by ordinary least
 * squares (Commons Math {@link SimpleRegression} for decode-only steps, and
 * {@link OLSMultipleLinearRegression} when steps also carry prefill tokens). The caller
 * produces the observations, for instance by timing the engine's cost model at several batch
 * sizes; this class only does the regression.
 */
public final class IterationTimeFit {

    private IterationTimeFit() {}

    /** Fits tau(b) = alpha + beta b to decode-only steps: batch size b took stepSeconds[i]. */
    public static FittedIterationTime fitDecode(int[] batchSizes, double[] stepSeconds) {
        checkSameLength(batchSizes.length, stepSeconds.length, 2);
        SimpleRegression regression = new SimpleRegression();
        for (int i = 0; i < batchSizes.length; i++) {
            regression.addData(batchSizes[i], stepSeconds[i]);
        }
        if (Double.isNaN(regression.getSlope())) {
            throw new IllegalArgumentException("batchSizes must hold at least two distinct values to fit a slope");
        }
        IterationTime fitted = IterationTime.decodeOnly(regression.getIntercept(), regression.getSlope());
        return new FittedIterationTime(fitted, clampUnit(regression.getRSquare()), batchSizes.length);
    }

    /** Fits tau = alpha + betaDecode b + betaPrefill prefillTokens to mixed steps. */
    public static FittedIterationTime fitDecodeAndPrefill(int[] batchSizes, int[] prefillTokens, double[] stepSeconds) {
        checkSameLength(batchSizes.length, stepSeconds.length, 4);
        checkSameLength(prefillTokens.length, stepSeconds.length, 4);
        double[][] shapes = new double[stepSeconds.length][];
        for (int i = 0; i < shapes.length; i++) {
            shapes[i] = new double[] {batchSizes[i], prefillTokens[i]};
        }
        OLSMultipleLinearRegression regression = new OLSMultipleLinearRegression();
        regression.newSampleData(stepSeconds.clone(), shapes);
        try {
            double[] coefficients = regression.estimateRegressionParameters();
            IterationTime fitted = new IterationTime(coefficients[0], coefficients[1], coefficients[2]);
            return new FittedIterationTime(fitted, clampUnit(regression.calculateRSquared()), stepSeconds.length);
        } catch (SingularMatrixException e) {
            throw new IllegalArgumentException(
                    "batchSizes and prefillTokens must vary independently to fit both slopes", e);
        }
    }

    /**
     * Fits tau = alpha + betaDecode b + betaPrefill prefillTokens minimizing relative rather than absolute error
     * (weighted least squares with weights 1 / stepSeconds), so short steps at small batch count as much as long ones.
     * The reported R^2 is that of the fitted line on the original scale.
     */
    public static FittedIterationTime fitDecodeAndPrefillRelative(int[] batchSizes, int[] prefillTokens, double[] stepSeconds) {
        checkSameLength(batchSizes.length, stepSeconds.length, 4);
        checkSameLength(prefillTokens.length, stepSeconds.length, 4);
        double[][] shapes = new double[stepSeconds.length][];
        double[] ones = new double[stepSeconds.length];
        for (int i = 0; i < shapes.length; i++) {
            if (!(stepSeconds[i] > 0)) {
                throw new IllegalArgumentException("stepSeconds must be > 0 for a relative fit, got " + stepSeconds[i]);
            }
            double w = 1 / stepSeconds[i];
            shapes[i] = new double[] {w, w * batchSizes[i], w * prefillTokens[i]};
            ones[i] = 1;
        }
        OLSMultipleLinearRegression regression = new OLSMultipleLinearRegression();
        regression.setNoIntercept(true);
        regression.newSampleData(ones, shapes);
        try {
            double[] c = regression.estimateRegressionParameters();
            IterationTime fitted = new IterationTime(c[0], c[1], c[2]);
            return new FittedIterationTime(fitted, rSquared(fitted, batchSizes, prefillTokens, stepSeconds), stepSeconds.length);
        } catch (SingularMatrixException e) {
            throw new IllegalArgumentException(
                    "batchSizes and prefillTokens must vary independently to fit both slopes", e);
        }
    }

    private static double rSquared(IterationTime t, int[] batchSizes, int[] prefillTokens, double[] stepSeconds) {
        double mean = 0;
        for (double y : stepSeconds) {
            mean += y / stepSeconds.length;
        }
        double residual = 0;
        double total = 0;
        for (int i = 0; i < stepSeconds.length; i++) {
            double e = stepSeconds[i] - t.seconds(batchSizes[i], prefillTokens[i]);
            residual += e * e;
            total += (stepSeconds[i] - mean) * (stepSeconds[i] - mean);
        }
        return total == 0 ? 1 : clampUnit(1 - residual / total);
    }

    private static void checkSameLength(int shapes, int times, int minimum) {
        if (shapes != times) {
            throw new IllegalArgumentException(
                    "step shapes (" + shapes + ") and stepSeconds (" + times + ") differ in length");
        }
        if (times < minimum) {
            throw new IllegalArgumentException("need at least " + minimum + " steps to fit, got " + times);
        }
    }

    /** R^2 of an exact fit can round a hair outside [0, 1]. */
    private static double clampUnit(double rSquared) {
        return Math.max(0, Math.min(1, rSquared));
    }
}
