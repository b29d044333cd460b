package dev.infersim.queueing;

import java.util.Arrays;

/**
 * {@link IterationTimes} as tables indexed by the number of decoding sequences, filled by the caller from an engine's
 * cost model (no fitted line: the time of n sequences is what the cost model says of n sequences).
 *
 * @param decodeSeconds  [n] an iteration of n decodes
 * @param meanSeconds    [n] the mean iteration with n running, admissions' prefill work included
 * @param prefillSeconds    [n][k - 1] the prefill of k prompts admitted together while n others decode; beyond the
 *                          table's last k the time grows by its last step per prompt
 * @param prefillIterations [n][k - 1] the iterations that prefill spans (at least 1), extended alike
 * @param firstTokenSeconds [n][k - 1][j] when the j-th of those k prompts (first come, first prefilled) gets its first
 *                          token, at most prefillSeconds[n][k - 1], for k up to the row's length (at most the prefill
 *                          row's); beyond it, the last row's shares of the whole
 */
public record TabulatedIterationTimes(double[] decodeSeconds, double[] meanSeconds, double[][] prefillSeconds,
                                      double[][] prefillIterations, double[][][] firstTokenSeconds) implements IterationTimes {

    public TabulatedIterationTimes {
        int n = decodeSeconds.length;
        if (n < 2 || meanSeconds.length != n || prefillSeconds.length != n || prefillIterations.length != n) {
            throw new IllegalArgumentException("tables must have equal lengths of at least 2 (batch 0 and 1), got "
                    + n + ", " + meanSeconds.length + ", " + prefillSeconds.length + ", " + prefillIterations.length);
        }
        for (int b = 1; b < n; b++) {
            Checks.positive("decodeSeconds[" + b + "]", decodeSeconds[b]);
            if (!(meanSeconds[b] >= decodeSeconds[b]) || Double.isInfinite(meanSeconds[b])) {
                throw new IllegalArgumentException("meanSeconds[" + b + "] must be finite and at least decodeSeconds["
                        + b + "] = " + decodeSeconds[b] + ", got " + meanSeconds[b]);
            }
        }
        for (int b = 0; b < n; b++) {
            if (prefillSeconds[b].length < 2) {
                throw new IllegalArgumentException("prefillSeconds[" + b + "] needs k = 1 and 2 at least");
            }
            if (prefillIterations[b].length != prefillSeconds[b].length || firstTokenSeconds[b].length < 1
                    || firstTokenSeconds[b].length > prefillSeconds[b].length) {
                throw new IllegalArgumentException("prefillIterations[" + b + "] must cover the k of prefillSeconds[" + b
                        + "], firstTokenSeconds[" + b + "] at least k = 1 and at most those");
            }
            for (int k = 0; k < prefillSeconds[b].length; k++) {
                Checks.positive("prefillSeconds[" + b + "][" + k + "]", prefillSeconds[b][k]);
                if (!(prefillIterations[b][k] >= 1) || Double.isInfinite(prefillIterations[b][k])) {
                    throw new IllegalArgumentException("prefillIterations[" + b + "][" + k + "] must be finite and at least 1, got "
                            + prefillIterations[b][k]);
                }
            }
        }
    }

    /** The tables for n = 0..maxBatch only (the entries up to it do not depend on the largest batch). */
    public TabulatedIterationTimes upTo(int maxBatch) {
        int n = maxBatch + 1;
        return new TabulatedIterationTimes(Arrays.copyOf(decodeSeconds, n), Arrays.copyOf(meanSeconds, n),
                Arrays.copyOf(prefillSeconds, n), Arrays.copyOf(prefillIterations, n),
                Arrays.copyOf(firstTokenSeconds, n));
    }

    /** These tables with the mean iteration at batch n replaced. */
    public TabulatedIterationTimes withMeanSeconds(int n, double seconds) {
        double[] mean = meanSeconds.clone();
        mean[n] = seconds;
        return new TabulatedIterationTimes(decodeSeconds, mean, prefillSeconds, prefillIterations, firstTokenSeconds);
    }

    /** The largest batch the tables cover. */
    public int maxBatch() {
        return decodeSeconds.length - 1;
    }

    @Override
    public double decodeSeconds(int n) {
        return decodeSeconds[n];
    }

    @Override
    public double meanSeconds(int n) {
        return meanSeconds[n];
    }

    @Override
    public double prefillSeconds(int n, int prompts) {
        return extended(prefillSeconds[n], prompts);
    }

    @Override
    public double prefillIterations(int n, int prompts) {
        return extended(prefillIterations[n], prompts);
    }

    @Override
    public double firstTokenSeconds(int n, int prompts, int position) {
        double[][] row = firstTokenSeconds[n];
        if (prompts <= row.length) {
            return row[prompts - 1][position];
        }
        double[] last = row[row.length - 1];
        int scaled = (int) Math.round(position * (last.length - 1.0) / (prompts - 1));
        return prefillSeconds(n, prompts) * last[scaled] / last[last.length - 1];
    }

    private static double extended(double[] row, int prompts) {
        if (prompts <= row.length) {
            return row[prompts - 1];
        }
        double step = row[row.length - 1] - row[row.length - 2];
        return row[row.length - 1] + (prompts - row.length) * step;
    }
}
