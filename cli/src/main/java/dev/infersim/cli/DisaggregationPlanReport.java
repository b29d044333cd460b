package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.result.GoodputSlo;
import dev.infersim.sim.DisaggregatedFleet;
import dev.infersim.sim.DisaggregationPlanner;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** The terminal form of a disaggregation plan ({@link DisaggregationPlanner}) and of a disaggregated run's pools. */
final class DisaggregationPlanReport {
    private DisaggregationPlanReport() {
    }

    static void print(List<DisaggregationPlanner.Outcome> outcomes, Deployment d, SimulationOptions options, double target,
                      double rate, PrintStream out) {
        GoodputSlo slo = options.slo();
        double price = options.dollarsPerGpuHour();
        out.printf(Locale.ROOT, "SLO: %s for %.0f%% of requests; at %s req/s, and the highest rate that meets it:%n",
                describe(slo), target * 100, rate);
        out.printf(Locale.ROOT, "%-14s %5s %12s %12s %12s %14s %14s %14s%n", "configuration", "GPUs", "attainment",
                "P90 TTFT ms", "P90 TPOT ms", "goodput req/s", "req/s per GPU", "$/1M requests");
        for (DisaggregationPlanner.Outcome o : outcomes) {
            int gpus = (o.split().prefill() + o.split().decode()) * d.tensorParallelSize();
            double dollars = DisaggregationPlanner.dollarsPerMillionGoodRequests(o, gpus, price, target);
            out.printf(Locale.ROOT, "%-14s %5d %11.1f%% %12.1f %12.2f %14s %14.3f %14s%n", o.split(), gpus,
                    o.attainment() * 100, o.atRate().stats().ttft().percentileMs(90), o.atRate().stats().tpot().percentileMs(90),
                    (o.atSearchLimit() ? ">=" : "") + String.format(Locale.ROOT, "%.3f", o.goodputRate()), o.goodputRate() / gpus,
                    Double.isNaN(dollars) ? "-" : String.format(Locale.ROOT, "%.2f", dollars));
        }
        DisaggregationPlanner.Outcome aggregated = outcomes.get(0);
        DisaggregationPlanner.Outcome best = DisaggregationPlanner.best(outcomes);
        if (best.goodputRate() <= 0) {
            out.println("Best: none meets the SLO at any rate searched (down to 1/" + (int) 64 + " of --request-rate)");
        } else if (best == aggregated) {
            DisaggregationPlanner.Outcome split = bestSplit(outcomes);
            out.printf(Locale.ROOT, "Best: %s (the best split, %s, reaches %s of its goodput rate)%n", best.split(), split.split(),
                    ratio(split.goodputRate(), best.goodputRate()));
        } else {
            out.printf(Locale.ROOT, "Best: %s, %s the goodput rate of the same GPUs aggregated%n", best.split(),
                    ratio(best.goodputRate(), aggregated.goodputRate()));
        }
    }

    private static DisaggregationPlanner.Outcome bestSplit(List<DisaggregationPlanner.Outcome> outcomes) {
        return DisaggregationPlanner.best(outcomes.subList(1, outcomes.size()));
    }

    private static String ratio(double a, double b) {
        return b <= 0 ? "infinitely many times" : String.format(Locale.ROOT, "%.2fx", a / b);
    }

    /** The objectives set, e.g. "TTFT <= 390.84 ms and TPOT <= 10 ms". */
    static String describe(GoodputSlo slo) {
        java.util.StringJoiner b = new java.util.StringJoiner(" and ");
        double[] ms = {slo.ttftMs(), slo.tpotMs(), slo.e2elMs()};
        String[] names = {"TTFT", "TPOT", "E2EL"};
        for (int i = 0; i < ms.length; i++) {
            if (!Double.isNaN(ms[i])) {
                b.add(names[i] + " <= " + (ms[i] == Math.rint(ms[i]) ? Long.toString((long) ms[i])
                        : String.format(Locale.ROOT, "%.2f", ms[i])) + " ms");
            }
        }
        return b.toString();
    }

    /** One line on a disaggregated run's pools and the KV moved between them. */
    static String pools(SimulationResult result) {
        DisaggregatedFleet.Pools pd = result.simulatorKeys().disaggregation();
        DisaggregatedFleet.Pool p = pd.prefill();
        DisaggregatedFleet.Pool d = pd.decode();
        return String.format(Locale.ROOT, "Pools: %d prefill (peak KV %.0f%%, peak waiting %d), %d decode (peak KV %.0f%%, "
                        + "peak waiting %d); %d KV transfers, %.1f GB", p.replicas(), 100 * p.kvCacheUsagePeak(),
                p.waitingPeak(), d.replicas(), 100 * d.kvCacheUsagePeak(), d.waitingPeak(), pd.kvTransfers(),
                pd.kvTransferredBytes() / 1e9);
    }
}
