package dev.infersim.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The demo's side-by-side table of measured, simulated and predicted numbers, the knee each method finds, and plain
 * words on where they differ.
 *
 * <p>The knee is the engine's capacity, found the same way from the measured and the simulated sweep: the completion
 * rate over the second half of each run's sending. Below the knee requests finish as fast as they are sent; past it
 * they finish at the engine's capacity whatever the offered rate (under continuous batching only once the batch has
 * filled, which is why each rate sends for a fixed time rather than a fixed count). Once some rate is overloaded
 * (completions under 90% of the rate sent) the knee is the highest completion rate of the sweep. The prediction's
 * knee is the queueing chain's saturation rate. A sweep that never overloads has no knee.
 */
final class DemoReport {
    private static final double CLOSE = 0.10;

    private final List<DemoCommand.Row> rows;
    private final double predictedSaturation;
    private final double simulatedSaturation;
    private final double timeScale;
    private final double sloTtftP99Ms;
    private final String predictor;
    private final boolean fixedTiming;

    DemoReport(List<DemoCommand.Row> rows, double predictedSaturation, double simulatedSaturation, double timeScale,
               double sloTtftP99Ms, String predictor, boolean fixedTiming) {
        this.rows = rows;
        this.predictedSaturation = predictedSaturation;
        this.simulatedSaturation = simulatedSaturation;
        this.timeScale = timeScale;
        this.sloTtftP99Ms = sloTtftP99Ms;
        this.predictor = predictor;
        this.fixedTiming = fixedTiming;
    }

    List<DemoCommand.Row> rows() {
        return rows;
    }

    double sloTtftP99Ms() {
        return sloTtftP99Ms;
    }

    /**
     * The measured knee, req/s of model time; NaN when no rate of the sweep was overloaded. A run the client flagged
     * for send lag still counts: overload is judged against the rate it actually sent, not the rate asked for.
     */
    double measuredKnee() {
        return knee(DemoCommand.Row::measured);
    }

    /** The simulated sweep's knee, found by the same rule as the measured one. */
    double simulatedKnee() {
        return knee(DemoCommand.Row::simulated);
    }

    double predictedKnee() {
        return predictedSaturation;
    }

    private double knee(Function<DemoCommand.Row, DemoCommand.Side> side) {
        List<DemoCommand.Side> sides = rows.stream().map(side).toList();
        boolean overloaded = sides.stream().anyMatch(DemoCommand.Side::overloaded);
        return overloaded ? sides.stream().mapToDouble(DemoCommand.Side::lateCompletionsPerS).filter(v -> !Double.isNaN(v))
                .max().orElse(Double.NaN) : Double.NaN;
    }

    /** The highest swept rate whose TTFT p99 meets the objective, with every lighter rate meeting it too; NaN if none. */
    double highestRateMeetingSlo(Function<DemoCommand.Row, DemoCommand.Side> side) {
        double best = Double.NaN;
        for (DemoCommand.Row r : rows) {
            double p99 = side.apply(r).ttftP99Ms();
            if (Double.isNaN(p99) || p99 > sloTtftP99Ms || (side == MEASURED && !r.measuredValid())) {
                break;
            }
            best = r.rate();
        }
        return best;
    }

    static final Function<DemoCommand.Row, DemoCommand.Side> MEASURED = DemoCommand.Row::measured;
    static final Function<DemoCommand.Row, DemoCommand.Side> SIMULATED = DemoCommand.Row::simulated;
    static final Function<DemoCommand.Row, DemoCommand.Side> PREDICTED = DemoCommand.Row::predicted;

    void print(PrintStream out) {
        out.println();
        out.println("Measured = benchmark client against the mock server over HTTP (converted to model time);");
        out.println("simulated = discrete-event simulator, same requests; predicted = " + predictor + ".");
        out.println("Each cell: measured / simulated / predicted. Output tok/s is the steady state: requests taken in while "
                + "sending times mean output tokens (vLLM's output_throughput, in the saved results, also counts the drain).");
        out.println("Waiting = mean requests queued for the engine (Little's law); past the knee it grows for as long as "
                + "the run lasts, and the prediction says 'unstable' ('-').");
        out.printf(Locale.ROOT, "%-14s %-22s %-24s %-22s %-22s %-18s %s%n", "rate req/s", "TTFT p50 ms", "TTFT p99 ms",
                "TPOT p50 ms", "output tok/s", "waiting", "client vs server p99 ms");
        for (DemoCommand.Row r : rows) {
            out.printf(Locale.ROOT, "%-14s %-22s %-24s %-22s %-22s %-18s %.3f%s%n",
                    String.format(Locale.ROOT, "%.2f (%.0f%%)", r.rate(), 100 * r.fraction()),
                    triple(r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), r.predicted().ttftP50Ms(), 1),
                    triple(r.measured().ttftP99Ms(), r.simulated().ttftP99Ms(), r.predicted().ttftP99Ms(), 1),
                    triple(r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), r.predicted().tpotP50Ms(), 2),
                    triple(r.measured().outputTokensPerS(), r.simulated().outputTokensPerS(),
                            r.predicted().outputTokensPerS(), 0),
                    triple(r.measured().meanWaiting(), r.simulated().meanWaiting(), r.predicted().meanWaiting(), 1),
                    r.groundTruthP99Ms(), r.measuredValid() ? "" : " (run flagged invalid: "
                            + String.join("; ", r.invalidReasons()) + ")");
        }
        out.printf(Locale.ROOT, "knee (capacity), req/s: measured %s / simulated %s / predicted %.2f; a long simulation "
                        + "(%,d requests at twice the predicted rate) serves %.2f%n",
                rate(measuredKnee()),
                rate(simulatedKnee()), predictedSaturation, DemoCommand.STEADY_RUN_REQUESTS, simulatedSaturation);
        out.println("  (a sweep's knee is its highest completion rate over the second half of sending, once some rate was "
                + "overloaded, i.e. finished under 90% of the rate sent; the prediction's is its closed form's saturation rate)");
        out.printf(Locale.ROOT, "highest rate with TTFT p99 <= %.0f ms: measured %s / simulated %s / predicted %s%n",
                sloTtftP99Ms, rate(highestRateMeetingSlo(MEASURED)), rate(highestRateMeetingSlo(SIMULATED)),
                rate(highestRateMeetingSlo(PREDICTED)));

        out.println();
        List<String> notes = notes();
        out.println(notes.isEmpty() ? "All three agree within 10% at every rate below saturation." : "Where they disagree, and why:");
        notes.forEach(n -> out.println("  - " + n));
    }

    private static String rate(double r) {
        return Double.isNaN(r) ? "not reached in the sweep" : String.format(Locale.ROOT, "%.2f", r);
    }

    private List<String> notes() {
        List<String> notes = new ArrayList<>();
        compare(notes, "", "knee", predictedSaturation, simulatedKnee(), "predicted", "simulated", fixedTiming
                ? "the queue's capacity is the slots over the mean service time of the configured output lengths, while "
                        + "a run draws its own output lengths and ends while long requests still hold slots"
                : "the chain prices each batch size with the engine's cost model and the prompts admitted per "
                        + "iteration, while near the knee the engine's batch and its prefills swing around those means");
        for (DemoCommand.Row r : rows) {
            String at = String.format(Locale.ROOT, "at %.2f req/s", r.rate());
            if (r.simulated().overloaded() || r.predicted().saturated()) {
                notes.add(at + " the offered load is past the knee: the queue grows for as long as the run lasts, so its "
                        + "latencies measure the run's length, not a steady state, and the closed form has no stationary answer "
                        + "(it says unstable); throughput stays at capacity.");
                continue;
            }
            compare(notes, at, "TTFT p50", r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), "measured", "simulated",
                    measuredWhy());
            compare(notes, at, "TPOT p50", r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), "measured", "simulated",
                    measuredWhy());
            comparePredicted(notes, at, "TTFT p50", r.predicted().ttftP50Ms(), r.simulated().ttftP50Ms(),
                    r.steadySimulated().ttftP50Ms(), fixedTiming ? FIXED_WAIT : "the chain holds the batch size fixed while an arrival waits for "
                            + "its iteration and is prefilled; in the engine the batch moves meanwhile");
            comparePredicted(notes, at, "TTFT p99", r.predicted().ttftP99Ms(), r.simulated().ttftP99Ms(),
                    r.steadySimulated().ttftP99Ms(), fixedTiming ? FIXED_WAIT : "the chain's tail is the wait for a batch slot, for the iteration "
                            + "an arrival lands in (runs of long prefill iterations included) and for the prompts sharing "
                            + "its prefill, each at a fixed batch size; the longer a run near saturation, the more bursts "
                            + "its tail holds");
            comparePredicted(notes, at, "TPOT p50", r.predicted().tpotP50Ms(), r.simulated().tpotP50Ms(),
                    r.steadySimulated().tpotP50Ms(), fixedTiming ? "the queue gives every token the mean inter-token "
                            + "latency; a run draws its own jitter" : "the chain gives each request the mean iteration of the batch it "
                            + "finds on arrival; in the engine the batch changes over the request's life");
            comparePredicted(notes, at, "output tok/s", r.predicted().outputTokensPerS(), r.simulated().outputTokensPerS(),
                    r.steadySimulated().outputTokensPerS(), "the closed form multiplies the nominal rate by the configured "
                            + "mean output length, while a run draws its own Poisson arrivals and output lengths");
        }
        return notes;
    }

    private static final String FIXED_WAIT = "the M/G/c wait is Allen and Cunneen's approximation, exact only for "
            + "exponential service times, and its percentiles read the wait as exponential once a request waits";

    private String measuredWhy() {
        return String.format(Locale.ROOT, "the measurement adds HTTP, SSE and client overheads and this machine's scheduling "
                + "jitter, multiplied by the time scale (%.0fx) when converted to model time; the client-vs-server column "
                + "bounds the client's own error", timeScale);
    }

    /**
     * Predicted against the simulated run, and when they differ against a {@value DemoCommand#STEADY_RUN_REQUESTS}-request
     * simulation at the same rate: the chain describes the steady state, which a short run near saturation has not
     * reached when it ends, so a gap that the long run closes is the run's length, not the model.
     */
    private static void comparePredicted(List<String> notes, String at, String metric, double predicted, double simulated,
                                         double steady, String modelWhy) {
        if (Double.isNaN(predicted) || Double.isNaN(simulated) || simulated == 0
                || Math.abs(predicted / simulated - 1) <= CLOSE) {
            return;
        }
        String head = String.format(Locale.ROOT, "%s %s predicted is %+.0f%% vs simulated", at, metric,
                100 * (predicted / simulated - 1));
        if (Double.isNaN(steady) || steady == 0) {
            notes.add(head + ": " + modelWhy + ".");
        } else if (Math.abs(predicted / steady - 1) <= CLOSE) {
            notes.add(String.format(Locale.ROOT, "%s but %+.0f%% vs %,d simulated requests: the chain describes the steady "
                    + "state, which this short run does not reach (near saturation the batch keeps filling for longer "
                    + "than the run lasts).", head, 100 * (predicted / steady - 1), DemoCommand.STEADY_RUN_REQUESTS));
        } else {
            notes.add(String.format(Locale.ROOT, "%s and %+.0f%% vs %,d simulated requests: %s.", head,
                    100 * (predicted / steady - 1), DemoCommand.STEADY_RUN_REQUESTS, modelWhy));
        }
    }

    private static void compare(List<String> notes, String at, String metric, double a, double b, String aName,
                                String bName, String why) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return;
        }
        double diff = a / b - 1;
        if (Math.abs(diff) > CLOSE) {
            notes.add(String.format(Locale.ROOT, "%s%s %s is %+.0f%% vs %s: %s.", at.isEmpty() ? "" : at + " ", metric, aName, 100 * diff, bName, why));
        }
    }

    /** Measured, simulated and predicted values as a JSON object; null where a method found none. */
    private static Map<String, Object> byMethod(double measured, double simulated, double predicted) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("measured", Double.isNaN(measured) ? null : measured);
        m.put("simulated", Double.isNaN(simulated) ? null : simulated);
        m.put("predicted", Double.isNaN(predicted) ? null : predicted);
        return m;
    }

    private static String triple(double a, double b, double c, int decimals) {
        String f = "%." + decimals + "f";
        return fmt(f, a) + " / " + fmt(f, b) + " / " + fmt(f, c);
    }

    private static String fmt(String f, double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, f, v);
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("time_scale", timeScale);
        m.put("predictor", predictor);
        m.put("predicted_saturation_rate_per_s", predictedSaturation);
        m.put("simulated_saturation_rate_per_s", simulatedSaturation);
        m.put("knee_rate_per_s", byMethod(measuredKnee(), simulatedKnee(), predictedSaturation));
        m.put("slo_ttft_p99_ms", sloTtftP99Ms);
        m.put("highest_rate_meeting_slo", byMethod(highestRateMeetingSlo(MEASURED), highestRateMeetingSlo(SIMULATED),
                highestRateMeetingSlo(PREDICTED)));
        List<Map<String, Object>> list = new ArrayList<>();
        for (DemoCommand.Row r : rows) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("request_rate", r.rate());
            row.put("fraction_of_predicted_saturation", r.fraction());
            row.put("measured", DemoCommand.sideMap(r.measured()));
            row.put("simulated", DemoCommand.sideMap(r.simulated()));
            row.put("predicted", DemoCommand.sideMap(r.predicted()));
            row.put("simulated_steady_state", DemoCommand.sideMap(r.steadySimulated()));
            row.put("client_vs_server_ttft_p99_ms", r.groundTruthP99Ms());
            row.put("measured_valid", r.measuredValid());
            row.put("measured_invalid_reasons", r.invalidReasons());
            list.add(row);
        }
        m.put("rows", list);
        m.put("notes", notes());
        return m;
    }
}
