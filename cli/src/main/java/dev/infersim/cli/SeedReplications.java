package dev.infersim.cli;

import dev.infersim.result.LatencyStats;
import dev.infersim.result.MeanInterval;
import dev.infersim.sim.SimulationResult;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongFunction;
import java.util.function.ToDoubleFunction;

/**
 * {@code simulate --seeds N}: the same run with N seeds, each metric reported as the mean over the runs with its 95%
 * t interval (independent replications, Law, <i>Simulation Modeling and Analysis</i>, 5th ed., 2015, section 9.4), so
 * that a class compares a closed form with the simulation's mean, not with whatever one seed drew. Also home of the
 * one line of Little's law every simulate prints (Little, Operations Research 9(3), 1961).
 */
final class SeedReplications {
    /** A metric of one run, by name and unit. */
    private record Metric(String label, ToDoubleFunction<SimulationResult> of) {
    }

    private static final List<Metric> METRICS = List.of(
            new Metric("Mean TTFT (ms):", r -> mean(r.stats().ttft())),
            new Metric("Median TTFT (ms):", r -> percentile(r.stats().ttft(), 50)),
            new Metric("P99 TTFT (ms):", r -> percentile(r.stats().ttft(), 99)),
            new Metric("Mean TPOT (ms):", r -> mean(r.stats().tpot())),
            new Metric("Mean ITL (ms):", r -> mean(r.stats().itl())),
            new Metric("Mean E2EL (ms):", r -> mean(r.stats().e2el())),
            new Metric("P99 E2EL (ms):", r -> percentile(r.stats().e2el(), 99)),
            new Metric("Mean queue time (ms):", r -> mean(r.stats().queueTime())),
            new Metric("Request throughput (req/s):", r -> r.stats().steadyRequestThroughput()),
            new Metric("Output token throughput (tok/s):", r -> r.stats().steadyOutputThroughput()),
            new Metric("Little's L (requests in system):", SimulationResult::meanRequestsInSystem));

    /** A latency's mean, NaN without samples (one-token outputs have no TPOT). */
    private static double mean(LatencyStats s) {
        return s.count() == 0 ? Double.NaN : s.meanMs();
    }

    private static double percentile(LatencyStats s, double p) {
        return s.count() == 0 ? Double.NaN : s.percentileMs(p);
    }

    private SeedReplications() {
    }

    /** Runs {@code n} replications with seeds {@code first} to {@code first + n - 1} and prints the means. */
    static void run(int n, long first, LongFunction<SimulationResult> simulate, PrintStream out) {
        List<SimulationResult> runs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            runs.add(simulate.apply(first + k));
        }
        out.printf(Locale.ROOT, "Across %d seeds (--seed %d to %d): each metric's mean over the runs, with its 95%% "
                + "interval (Student's t over the seeds)%n", n, first, first + n - 1);
        for (Metric m : METRICS) {
            double[] v = runs.stream().mapToDouble(m.of()).filter(Double::isFinite).toArray();
            MeanInterval mi = MeanInterval.of(v);
            out.printf(Locale.ROOT, "%-40s %s%n", m.label(), v.length == 0 ? "-" : String.format(Locale.ROOT,
                    "%-12s 95%% CI %s-%s", num(mi.mean()), num(mi.low()), num(mi.high())));
        }
        StringBuilder each = new StringBuilder();
        for (SimulationResult r : runs) {
            each.append(each.length() == 0 ? "" : ", ").append(num(r.stats().ttft().meanMs()));
        }
        out.printf(Locale.ROOT, "%-40s %s%n", "Mean TTFT of each seed (ms):", each);
        long saturated = runs.stream().filter(r -> r.saturation().saturated()).count();
        out.printf(Locale.ROOT, "Saturated: %d of %d runs%n", saturated, n);
    }

    /**
     * Little's law over the whole run, from first send to last completion: the time-average requests in the system L
     * against the arrival rate times the mean time in the system, lambda W, and how far apart they are.
     */
    static String littlesLaw(SimulationResult r) {
        double w = r.meanSojournNanos() / 1e6;
        double lambdaW = r.arrivalRatePerS() * w / 1e3;
        return String.format(Locale.ROOT, "Little's law (first send to last completion): L = %.3f requests in the system "
                        + "on average; lambda x W = %.3f req/s x %s ms = %.3f (%s)", r.meanRequestsInSystem(),
                r.arrivalRatePerS(), num(w), lambdaW, r.littlesLawError() < 0.0005 ? "equal within 0.1%"
                        : String.format(Locale.ROOT, "%.1f%% apart", 100 * r.littlesLawError()));
    }

    private static String num(double v) {
        if (!Double.isFinite(v)) {
            return "-";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : "%.2f", v);
    }
}
