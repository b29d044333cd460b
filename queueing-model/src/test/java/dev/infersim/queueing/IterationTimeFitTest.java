package dev.infersim.queueing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class IterationTimeFitTest {

    @Test
    void recoversExactDecodeCoefficients() {
        int[] batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
        double[] seconds = new double[batches.length];
        for (int i = 0; i < batches.length; i++) {
            seconds[i] = 0.006 + 0.00005 * batches[i];
        }
        FittedIterationTime fit = IterationTimeFit.fitDecode(batches, seconds);
        assertEquals(0.006, fit.iterationTime().alphaSeconds(), 1e-12);
        assertEquals(0.00005, fit.iterationTime().betaDecodeSecondsPerSeq(), 1e-14);
        assertEquals(0.0, fit.iterationTime().betaPrefillSecondsPerToken(), 0);
        assertEquals(1.0, fit.rSquared(), 1e-12);
        assertEquals(9, fit.samples());
    }

    @Test
    void recoversDecodeAndPrefillCoefficientsFromNoisySteps() {
        Random random = new Random(42);
        int n = 400;
        int[] batches = new int[n];
        int[] prefill = new int[n];
        double[] seconds = new double[n];
        for (int i = 0; i < n; i++) {
            batches[i] = 1 + random.nextInt(256);
            prefill[i] = random.nextInt(2048);
            seconds[i] = 0.006 + 0.00005 * batches[i] + 0.00002 * prefill[i] + 0.0002 * random.nextGaussian();
        }
        FittedIterationTime fit = IterationTimeFit.fitDecodeAndPrefill(batches, prefill, seconds);
        // Noise sd 0.2 ms over 400 steps: slope standard errors are ~1e-7 and ~1e-8, intercept ~3e-5.
        assertEquals(0.006, fit.iterationTime().alphaSeconds(), 1e-4);
        assertEquals(0.00005, fit.iterationTime().betaDecodeSecondsPerSeq(), 5e-7);
        assertEquals(0.00002, fit.iterationTime().betaPrefillSecondsPerToken(), 5e-8);
        assertTrue(fit.rSquared() > 0.99, "R^2 " + fit.rSquared());
    }

    @Test
    void rejectsStepsWithOneBatchSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IterationTimeFit.fitDecode(new int[] {4, 4, 4}, new double[] {0.01, 0.011, 0.012}));
        assertTrue(e.getMessage().contains("two distinct"), e.getMessage());
    }

    @Test
    void rejectsMismatchedArrays() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IterationTimeFit.fitDecode(new int[] {1, 2, 3}, new double[] {0.01, 0.02}));
        assertTrue(e.getMessage().contains("(3)") && e.getMessage().contains("(2)"), e.getMessage());
    }

    @Test
    void rejectsStepTimesThatShrinkWithBatchSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IterationTimeFit.fitDecode(new int[] {1, 2, 3}, new double[] {0.03, 0.02, 0.01}));
        assertTrue(e.getMessage().contains("betaDecodeSecondsPerSeq"), e.getMessage());
    }

    @Test
    void relativeFitRecoversExactCoefficientsAndFavoursShortSteps() {
        int[] batch = {1, 2, 4, 8, 64, 256, 1, 64};
        int[] prefill = {0, 0, 0, 0, 0, 0, 2048, 512};
        double[] exact = new double[batch.length];
        for (int i = 0; i < batch.length; i++) {
            exact[i] = 0.006 + 0.0001 * batch[i] + 0.00002 * prefill[i];
        }
        IterationTime t = IterationTimeFit.fitDecodeAndPrefillRelative(batch, prefill, exact).iterationTime();
        assertEquals(0.006, t.alphaSeconds(), 1e-12);
        assertEquals(0.0001, t.betaDecodeSecondsPerSeq(), 1e-12);
        assertEquals(0.00002, t.betaPrefillSecondsPerToken(), 1e-12);

        // a curved truth: flat at small batch, steep at large; the relative fit errs less on the short steps
        double[] curved = new double[batch.length];
        for (int i = 0; i < batch.length; i++) {
            curved[i] = 0.007 + 0.0000004 * batch[i] * batch[i] + 0.00002 * prefill[i];
        }
        IterationTime relative = IterationTimeFit.fitDecodeAndPrefillRelative(batch, prefill, curved).iterationTime();
        IterationTime absolute = IterationTimeFit.fitDecodeAndPrefill(batch, prefill, curved).iterationTime();
        double relativeError = Math.abs(relative.seconds(1, 0) / curved[0] - 1);
        double absoluteError = Math.abs(absolute.seconds(1, 0) / curved[0] - 1);
        assertTrue(relativeError < absoluteError, relativeError + " vs " + absoluteError);
    }
}
