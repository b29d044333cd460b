package dev.infersim.demo;

import dev.infersim.engine.EngineCore;
import dev.infersim.prediction.EnginePrediction;
import dev.infersim.queueing.ClosedLoopBatchingModel;
import dev.infersim.result.ServingStats;
import dev.infersim.sim.Replica;
import dev.infersim.sim.RoundRobinRouter;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpecBuilder;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The demo's closed loop: N clients, each sending its next request the moment its last one ends ({@code vllm bench
 * serve --max-concurrency N --request-rate inf}), simulated in virtual time and predicted in closed form
 * ({@link ClosedLoopBatchingModel}, what {@code predict --max-concurrency N} answers) at a few concurrencies from one
 * client to twice the batch the deployment sustains ({@link EnginePrediction#batchLimit()}). Below that batch each new
 * client raises throughput at little cost in latency; past it clients only queue, so throughput stays flat and latency
 * grows in proportion to N. Little's law for a closed loop with no think time, N = X R (X requests per second, R the mean
 * E2EL; J. D. C. Little, Operations Research 9(3), 1961, https://doi.org/10.1287/opre.9.3.383), is shown for the
 * simulation, whose X R must come within {@link #LITTLES_LAW_TOLERANCE} of N; the prediction satisfies it by
 * construction. Each simulated point runs 30 requests per client (at least 600) after 3N warm-ups, the start-up burst.
 */
public final class DemoClosedLoop {
    /** The simulation's X R against N: the measured window's edges (first and last requests) keep it from exact. */
    public static final double LITTLES_LAW_TOLERANCE = 0.05;
    /** The prediction against the simulation on throughput and mean latencies, as the scenario matrix holds it. */
    static final double PREDICTION_TOLERANCE = 0.10;
    private static final int REQUESTS_PER_CLIENT = 30;
    private static final int MIN_REQUESTS = 600;

    /** The demo's workload of {@code requests} requests, to which the closed loop sets its concurrency. */
    interface Requests {
        WorkloadSpecBuilder of(long requests);
    }

    private DemoClosedLoop() {
    }

    /** 1, 4, 16, ... below the batch limit, then the limit and twice it: the rise, the knee and the flat part. */
    public static List<Integer> concurrencies(int batchLimit) {
        List<Integer> n = new ArrayList<>();
        for (int c = 1; c < batchLimit; c *= 4) {
            n.add(c);
        }
        n.add(batchLimit);
        n.add(2 * batchLimit);
        return n;
    }

    /**
     * The demo's closed loop, printed: run with the engine model's prediction; null (saying why) under fixed timing,
     * whose closed form is the open loop's M/G/c queue only, and for an engine that runs one sequence at a time, where
     * the closed loop's model (of a batch) does not apply.
     */
    static DemoResult.ClosedLoop runAndPrint(DemoPrediction prediction, Requests requests, Supplier<EngineCore> engine,
                                             PrintStream out) {
        String skipped = !(prediction instanceof DemoPrediction.Chain chain) ? "under --timing fixed (its closed form "
                + "here is the engine model's)" : chain.p().batchLimit() <= 1 ? "for an engine that runs one sequence at "
                + "a time (its closed form is a batch's)" : null;
        if (skipped != null) {
            out.println();
            out.println("Closed loop: not run " + skipped + ".");
            return null;
        }
        DemoResult.ClosedLoop c = run(((DemoPrediction.Chain) prediction).p(), requests, engine);
        print(c, out);
        return c;
    }

    /** Simulates and predicts the closed loop at each of {@link #concurrencies}, with a fresh engine each time. */
    static DemoResult.ClosedLoop run(EnginePrediction prediction, Requests requests, Supplier<EngineCore> engine) {
        double meanOutput = prediction.moments().meanOutputTokens();
        List<DemoResult.ClosedLoopPoint> points = new ArrayList<>();
        for (int n : concurrencies(prediction.batchLimit())) {
            long warmups = 3L * n;
            ServingStats s = new Simulation(new Replica[] {new Replica(0, engine.get())}, new RoundRobinRouter(),
                    SimulationOptions.defaults().withWarmups(warmups), null)
                    .run(Workload.open(requests.of(warmups + Math.max(MIN_REQUESTS, (long) REQUESTS_PER_CLIENT * n))
                            .maxConcurrency(n).build()))
                    .stats();
            ClosedLoopBatchingModel m = prediction.closedLoop(n);
            points.add(new DemoResult.ClosedLoopPoint(n,
                    side(s.steadyRequestThroughput(), s.steadyOutputThroughput(), s.e2el().meanMs(), s.ttft().meanMs()),
                    side(m.throughputPerS(), m.throughputPerS() * meanOutput, 1e3 * m.meanE2elSeconds(),
                            1e3 * m.meanTtftSeconds())));
        }
        return new DemoResult.ClosedLoop(prediction.batchLimit(), LITTLES_LAW_TOLERANCE, PREDICTION_TOLERANCE, points);
    }

    private static DemoResult.ClosedLoopSide side(double requestsPerS, double outputTokensPerS, double e2elMs,
                                                  double ttftMs) {
        return new DemoResult.ClosedLoopSide(requestsPerS, outputTokensPerS, e2elMs, ttftMs, requestsPerS * e2elMs / 1e3);
    }

    /** The short table after the open loop's conclusions, and what it shows. */
    static void print(DemoResult.ClosedLoop c, PrintStream out) {
        out.println();
        out.printf(Locale.ROOT, "Closed loop: N clients, each sending its next request as its last ends (--max-concurrency N "
                + "--request-rate inf); the engine sustains a batch of %d. Means; each cell simulated / predicted.%n",
                c.batchLimit());
        out.printf(Locale.ROOT, "%-6s %-20s %-22s %-22s %-20s %s%n", "N", "req/s", "output tok/s", "E2EL ms", "TTFT ms",
                "X x R (sim)");
        for (DemoResult.ClosedLoopPoint p : c.points()) {
            out.printf(Locale.ROOT, "%-6d %-20s %-22s %-22s %-20s %.1f%n", p.maxConcurrency(),
                    pair(p.simulated().requestThroughput(), p.predicted().requestThroughput()),
                    pair(p.simulated().outputThroughput(), p.predicted().outputThroughput()),
                    pair(p.simulated().meanE2elMs(), p.predicted().meanE2elMs()),
                    pair(p.simulated().meanTtftMs(), p.predicted().meanTtftMs()), p.simulated().throughputTimesMeanE2el());
        }
        double little = c.points().stream().mapToDouble(DemoClosedLoop::littlesLawError).max().orElse(0);
        double prediction = c.points().stream().mapToDouble(DemoClosedLoop::predictionError).max().orElse(0);
        out.printf(Locale.ROOT, "Little's law (N = X x R, throughput times mean E2EL): the simulation's X x R is within %.1f%% "
                        + "of N at every N (%s %.0f%%). The prediction is within %.1f%% of the simulation on req/s, output "
                        + "tok/s, E2EL and TTFT (%s %.0f%%). Past N = %d throughput stays flat and latency grows with N: the extra clients "
                        + "only queue.%n", 100 * little, little <= c.littlesLawTolerance() ? "tolerance" : "OUTSIDE the tolerance of",
                100 * c.littlesLawTolerance(), 100 * prediction,
                prediction <= c.predictionTolerance() ? "tolerance" : "OUTSIDE the tolerance of",
                100 * c.predictionTolerance(), c.batchLimit());
    }

    /** |X R - N| / N of the simulation at one point. */
    static double littlesLawError(DemoResult.ClosedLoopPoint p) {
        return Math.abs(p.simulated().throughputTimesMeanE2el() - p.maxConcurrency()) / p.maxConcurrency();
    }

    /**
     * The prediction's largest relative error against the simulation at one point: req/s, output tok/s, mean E2EL,
     * mean TTFT.
     */
    static double predictionError(DemoResult.ClosedLoopPoint p) {
        DemoResult.ClosedLoopSide s = p.simulated();
        DemoResult.ClosedLoopSide q = p.predicted();
        return Math.max(Math.max(Math.abs(q.requestThroughput() / s.requestThroughput() - 1),
                        Math.abs(q.outputThroughput() / s.outputThroughput() - 1)),
                Math.max(Math.abs(q.meanE2elMs() / s.meanE2elMs() - 1), Math.abs(q.meanTtftMs() / s.meanTtftMs() - 1)));
    }

    private static String pair(double simulated, double predicted) {
        return String.format(Locale.ROOT, "%s / %s", num(simulated), num(predicted));
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }
}
