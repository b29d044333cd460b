package dev.infersim.demo;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How fast the demo's mock may run so that its measured side shows the engine, not the machine. The mock keeps model
 * time exactly (its engine steps have absolute deadlines), but everything between the engine and the client's
 * reading, in wall time, comes back multiplied by the time scale when converted to model time: the client's send lag,
 * its event loops' delays, engine steps that end late. So the demo first measures that error where it matters, in
 * short calibration runs near the knee: each request's TTFT as the client measured it against the server's own
 * (the ground truth in the last chunk), at p99, in wall milliseconds. It then takes the fastest time scale at which
 * that error, in model time, stays within its budget (a share of the TTFT objective): a quiet machine runs the mock
 * faster than the modelled GPU, a busy one slower. Because part of the error is the demo's own work, which shrinks
 * with the time scale, each new scale is measured again before it is taken, and a round lowers the scale by half at
 * most: at a high scale the demo's own load can saturate a small machine, and the error measured there says little of
 * a scale half as fast (on a 2-core machine 172 ms at 4x, 16 ms at 0.2x). After {@value #MAX_ROUNDS} rounds, or at
 * the lowest scale, the demo says that the error still exceeds its budget and goes on at the last scale measured.
 */
final class DemoCalibration {
    /** Calibration rounds at most: the first scale and up to five lower ones (4x, 2x, 1x, 0.5x, 0.25x, 0.2x). */
    static final int MAX_ROUNDS = 6;

    /** One calibration run at one time scale: the client's TTFT error p99 and the mock's step lag p99, wall ms. */
    record Round(double timeScale, double errorP99WallMs, double stepLagP99WallMs, long requests) {
        /** The error as the measured side shows it, model ms. */
        double errorModelMs() {
            return errorP99WallMs * timeScale;
        }
    }

    /** Runs one calibration at a time scale. */
    interface Probe {
        Round at(double timeScale);
    }

    /**
     * The time scale the demo runs at and the evidence: {@code withinBudget} false when even the last scale measured
     * left the error above the budget.
     */
    record Choice(double timeScale, boolean withinBudget, double budgetModelMs, String budgetWhy, List<Round> rounds) {

        /** What was chosen and why, in one paragraph, from the rounds' numbers. */
        String words() {
            StringBuilder s = new StringBuilder("Time scale: measured the client's TTFT error against the server's truth "
                    + "(p99, wall ms) before the sweep: ");
            List<String> parts = new ArrayList<>();
            for (Round r : rounds) {
                parts.add(String.format(Locale.ROOT, "%s ms at %sx (%s ms of model time, %d requests; the mock's "
                                + "engine steps ended up to %s ms late at p99)", DemoWords.ms(r.errorP99WallMs()),
                        scale(r.timeScale()), DemoWords.ms(r.errorModelMs()), r.requests(),
                        DemoWords.ms(r.stepLagP99WallMs())));
            }
            s.append(String.join("; ", parts)).append(". ");
            s.append(String.format(Locale.ROOT, "The budget is %s ms of model time (%s). ", DemoWords.ms(budgetModelMs),
                    budgetWhy));
            Round last = rounds.get(rounds.size() - 1);
            if (withinBudget) {
                s.append(String.format(Locale.ROOT, "Running the mock at %sx: %s.", scale(timeScale),
                        timeScale >= 1 ? String.format(Locale.ROOT, "%s times faster than the modelled GPU, the error "
                                + "still within the budget", scale(timeScale))
                                : String.format(Locale.ROOT, "this machine is busy, so the model clock runs %s times slower "
                                + "than the modelled GPU, which keeps the error within the budget (each model second "
                                + "takes %s wall seconds)", scale(1 / timeScale), scale(1 / timeScale))));
            } else {
                s.append(String.format(Locale.ROOT, "Even at %sx the error (%s ms of model time) exceeds the budget: the "
                                + "measured latencies show this machine's delays as much as the engine; the simulated "
                                + "column is what the engine did. A quieter machine, or a larger --max-noise-share, helps.",
                        scale(last.timeScale()), DemoWords.ms(last.errorModelMs())));
            }
            return s.toString();
        }
    }

    private DemoCalibration() {
    }

    /**
     * Measures at {@code maxScale} first; while the error exceeds the budget, measures again at the scale where the
     * error last measured would fit (at most nine tenths of the scale before, at least {@code minScale}).
     */
    static Choice choose(Probe probe, double budgetModelMs, String budgetWhy, double maxScale, double minScale) {
        List<Round> rounds = new ArrayList<>();
        double scale = maxScale;
        for (int k = 0; k < MAX_ROUNDS; k++) {
            Round r = probe.at(scale);
            rounds.add(r);
            if (r.errorModelMs() <= budgetModelMs) {
                return new Choice(scale, true, budgetModelMs, budgetWhy, List.copyOf(rounds));
            }
            if (scale <= minScale || k == MAX_ROUNDS - 1) {
                break;
            }
            double fits = r.errorP99WallMs() > 0 ? budgetModelMs / r.errorP99WallMs() : scale;
            scale = Math.max(minScale, roundDown(Math.min(0.9 * scale, Math.max(fits, scale / 2))));
        }
        return new Choice(scale, false, budgetModelMs, budgetWhy, List.copyOf(rounds));
    }

    /** Down to two significant figures, so that the scale reads plainly ("0.37x"). */
    static double roundDown(double v) {
        return new BigDecimal(v).round(new MathContext(2, RoundingMode.DOWN)).doubleValue();
    }

    /** A time scale as the demo prints it: "2", "0.37". */
    static String scale(double v) {
        return BigDecimal.valueOf(v).round(new MathContext(2, RoundingMode.HALF_UP)).stripTrailingZeros().toPlainString();
    }
}
