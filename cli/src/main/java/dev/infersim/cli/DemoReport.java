package dev.infersim.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The demo's side-by-side table of measured, simulated and predicted numbers, and plain words on where they differ. */
final class DemoReport {
    private static final double CLOSE = 0.10;

    private final List<DemoCommand.Row> rows;
    private final double predictedSaturation;
    private final double simulatedSaturation;
    private final double measuredKnee;
    private final double timeScale;

    DemoReport(List<DemoCommand.Row> rows, double predictedSaturation, double simulatedSaturation, double measuredKnee,
               double timeScale) {
        this.rows = rows;
        this.predictedSaturation = predictedSaturation;
        this.simulatedSaturation = simulatedSaturation;
        this.measuredKnee = measuredKnee;
        this.timeScale = timeScale;
    }

    void print(PrintStream out) {
        out.println();
        out.println("Measured = benchmark client against the mock server over HTTP (converted to model time);");
        out.println("simulated = discrete-event simulator, same requests; predicted = continuous-batching queueing chain.");
        out.println("Each cell: measured / simulated / predicted. Output tok/s is the steady state: requests taken in while "
                + "sending times mean output tokens (vLLM's output_throughput, in the saved results, also counts the drain).");
        out.printf(Locale.ROOT, "%-14s %-22s %-22s %-22s %-25s %s%n", "rate req/s", "TTFT p50 ms", "TTFT p99 ms",
                "TPOT p50 ms", "output tok/s", "client vs server p99 ms");
        for (DemoCommand.Row r : rows) {
            out.printf(Locale.ROOT, "%-14s %-22s %-22s %-22s %-25s %.3f%s%n",
                    String.format(Locale.ROOT, "%.2f (%.0f%%)", r.rate(), 100 * r.fraction()),
                    triple(r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), r.predicted().ttftP50Ms(), 1),
                    triple(r.measured().ttftP99Ms(), r.simulated().ttftP99Ms(), r.predicted().ttftP99Ms(), 1),
                    triple(r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), r.predicted().tpotP50Ms(), 2),
                    triple(r.measured().outputTokensPerS(), r.simulated().outputTokensPerS(),
                            r.predicted().outputTokensPerS(), 0),
                    r.groundTruthP99Ms(), r.measuredValid() ? "" : " (run flagged invalid)");
        }
        out.printf(Locale.ROOT, "saturation rate, req/s: measured %s / simulated %.2f (%,d requests offered at twice "
                + "the predicted rate) / predicted %.2f%n", Double.isNaN(measuredKnee) ? "not reached in the sweep (no knee)"
                : String.format(Locale.ROOT, "knee at %.2f", measuredKnee), simulatedSaturation,
                DemoCommand.STEADY_RUN_REQUESTS, predictedSaturation);
        out.println("  (the measured knee is the sweep's first rate at which the server took in requests at under 90% of the "
                + "rate they were sent, or whose median TTFT tripled; the sweep stops at 90% of the predicted rate)");

        out.println();
        List<String> notes = notes();
        out.println(notes.isEmpty() ? "All three agree within 10% at every rate below saturation." : "Where they disagree, and why:");
        notes.forEach(n -> out.println("  - " + n));
    }

    private List<String> notes() {
        List<String> notes = new ArrayList<>();
        compare(notes, "", "saturation rate", predictedSaturation, simulatedSaturation, "predicted", "simulated",
                "the chain assumes every iteration carries the mean prefill load and a linear iteration time fitted to "
                        + "the cost model, while the engine's prefills arrive unevenly");
        for (DemoCommand.Row r : rows) {
            String at = String.format(Locale.ROOT, "at %.2f req/s", r.rate());
            if (r.fraction() > 1) {
                notes.add(at + " the offered load is above saturation: queues grow for as long as the run lasts, so its "
                        + "latencies measure the run's length, not a steady state; the chain has no stationary answer.");
                continue;
            }
            compare(notes, at, "TTFT p50", r.measured().ttftP50Ms(), r.simulated().ttftP50Ms(), "measured", "simulated",
                    measuredWhy());
            compare(notes, at, "TPOT p50", r.measured().tpotP50Ms(), r.simulated().tpotP50Ms(), "measured", "simulated",
                    measuredWhy());
            comparePredicted(notes, at, "TTFT p50", r.predicted().ttftP50Ms(), r.simulated().ttftP50Ms(),
                    r.steadySimulated().ttftP50Ms(), "the chain's iterations carry the mean prefill load and its prefill "
                            + "iteration is the mean one; the engine's real iterations vary with the batch and with prefills "
                            + "sharing them");
            comparePredicted(notes, at, "TTFT p99", r.predicted().ttftP99Ms(), r.simulated().ttftP99Ms(),
                    r.steadySimulated().ttftP99Ms(), "the chain's tail is the wait for the running iteration, for a "
                            + "batch slot and for the prompts sharing the prefill iteration, all at its states' mean "
                            + "iteration times; in the engine bursts of arrivals lengthen the iterations around them, and "
                            + "the longer the run near saturation the more such bursts its tail holds");
            comparePredicted(notes, at, "TPOT p50", r.predicted().tpotP50Ms(), r.simulated().tpotP50Ms(),
                    r.steadySimulated().tpotP50Ms(), "the chain gives a token-weighted mean TPOT from a linear fit of "
                            + "the iteration time; the table compares it with a median");
            comparePredicted(notes, at, "output tok/s", r.predicted().outputTokensPerS(), r.simulated().outputTokensPerS(),
                    r.steadySimulated().outputTokensPerS(), "the chain multiplies the nominal rate by the configured "
                            + "mean output length, while a run draws its own Poisson arrivals and output lengths");
        }
        return notes;
    }

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
        m.put("predicted_saturation_rate_per_s", predictedSaturation);
        m.put("simulated_saturation_rate_per_s", simulatedSaturation);
        m.put("measured_knee_rate_per_s", Double.isNaN(measuredKnee) ? null : measuredKnee);
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
            list.add(row);
        }
        m.put("rows", list);
        m.put("notes", notes());
        return m;
    }
}
