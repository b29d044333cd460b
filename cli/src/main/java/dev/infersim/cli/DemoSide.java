package dev.infersim.cli;

import dev.infersim.bench.ClientKeys;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.ServingResult;
import dev.infersim.result.RunInfo;
import dev.infersim.result.MeanInterval;
import dev.infersim.sim.SimulationResult;
import dev.infersim.sim.SimulatorKeys;
import java.util.List;

/**
 * The numbers the table and charts compare, in model time (milliseconds and per second of the modelled GPU), with
 * the 95% intervals of TTFT p50 and p99 and of TPOT p50 (none for the closed form), and the requests served per
 * second over the second half of sending with the rates of its consecutive windows ({@link LateServiceRate}), whose
 * batch means bound the knee.
 * Requests waiting is Little's law on the engine's waiting room (requests taken in per second times the mean wait
 * from arrival to first scheduling); past saturation it measures how long the run lasted, not a steady state.
 * {@code sendRatePerS} is the rate actually offered while sending (a short Poisson run misses its nominal rate).
 */
record DemoSide(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double outputTokensPerS, double requestsPerS,
            double meanWaiting, double sendRatePerS, double lateServiceRatePerS, boolean saturated,
            DemoSpan ttftP50, DemoSpan ttftP99, DemoSpan tpotP50, double[] serviceWindows) {

    /** Point values only: a closed form's, or a test's. */
    DemoSide(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double outputTokensPerS, double requestsPerS,
         double meanWaiting, double sendRatePerS, double lateServiceRatePerS, boolean saturated) {
        this(ttftP50Ms, ttftP99Ms, tpotP50Ms, outputTokensPerS, requestsPerS, meanWaiting, sendRatePerS,
                lateServiceRatePerS, saturated, DemoSpan.NONE, DemoSpan.NONE, DemoSpan.NONE, new double[0]);
    }

    /**
     * @param serviceWindows the run's service rate windows per second of wall time ({@link LateServiceRate#windows})
     */
    static DemoSide measured(ServingResult<ClientKeys> r, double timeScale, double[] serviceWindows) {
        ClientKeys keys = r.producer();
        double requestsPerS = orNaN(keys.steadyRequestThroughput()) / timeScale;
        double[] windows = serviceWindows.clone();
        for (int i = 0; i < windows.length; i++) {
            windows[i] /= timeScale;
        }
        return new DemoSide(median(r.metric("ttft")) * timeScale, p99(r.metric("ttft")) * timeScale,
                median(r.metric("tpot")) * timeScale, orNaN(keys.steadyOutputThroughput()) / timeScale,
                requestsPerS, requestsPerS * orNaN(r.serverLatency("queue_time").meanMs()) * timeScale / 1e3,
                orNaN(keys.steadySendRate()) / timeScale,
                windows.length > 0 ? MeanInterval.of(windows).mean()
                        : LateServiceRate.ofSeries(keys.timeseries()) / timeScale, false,
                DemoSpan.of(r.interval("median_ttft_ms"), timeScale), DemoSpan.of(r.interval("p99_ttft_ms"), timeScale),
                DemoSpan.of(r.interval("median_tpot_ms"), timeScale), windows);
    }

    private static double median(MetricSummary m) {
        return m == null ? Double.NaN : orNaN(m.medianMs());
    }

    private static double p99(MetricSummary m) {
        return m == null ? Double.NaN : m.percentileMs(99);
    }

    /** @param capacityWindows the run's capacity windows per model second ({@link LateServiceRate.windows}) */
    static DemoSide simulated(SimulationResult r, double[] capacityWindows) {
        ServingResult<SimulatorKeys> f = r.report(new RunInfo("", "infersim-sim", "m", "m", 1, 1, 1, 0,
                List.of("ttft", "tpot"), List.of(50.0, 99.0))).result();
        SimulatorKeys keys = f.producer();
        double requestsPerS = orNaN(keys.steadyRequestThroughput());
        return new DemoSide(f.metric("ttft").medianMs(), f.metric("ttft").percentileMs(99), f.metric("tpot").medianMs(),
                orNaN(keys.steadyOutputThroughput()), requestsPerS,
                requestsPerS * f.serverLatency("queue_time").meanMs() / 1e3, orNaN(keys.steadySendRate()),
                capacityWindows.length > 0 ? MeanInterval.of(capacityWindows).mean()
                        : LateServiceRate.ofTimeline(r.timeline()), r.saturation().saturated(),
                DemoSpan.of(f.interval("median_ttft_ms"), 1), DemoSpan.of(f.interval("p99_ttft_ms"), 1),
                DemoSpan.of(f.interval("median_tpot_ms"), 1), capacityWindows);
    }

    private static double orNaN(Double v) {
        return v == null ? Double.NaN : v;
    }

    /**
     * The mean of independent replications with each mean's 95% t interval; the late completion rate's windows
     * are the replications' own rates, so that its interval too is across replications. Saturated when most were.
     */
    static DemoSide mean(List<DemoSide> replications) {
        MeanInterval p50 = MeanInterval.of(field(replications, DemoSide::ttftP50Ms));
        MeanInterval p99 = MeanInterval.of(field(replications, DemoSide::ttftP99Ms));
        MeanInterval tpot = MeanInterval.of(field(replications, DemoSide::tpotP50Ms));
        double[] late = field(replications, DemoSide::lateServiceRatePerS);
        long saturated = replications.stream().filter(DemoSide::saturated).count();
        return new DemoSide(p50.mean(), p99.mean(), tpot.mean(),
                MeanInterval.of(field(replications, DemoSide::outputTokensPerS)).mean(),
                MeanInterval.of(field(replications, DemoSide::requestsPerS)).mean(),
                MeanInterval.of(field(replications, DemoSide::meanWaiting)).mean(),
                MeanInterval.of(field(replications, DemoSide::sendRatePerS)).mean(), MeanInterval.of(late).mean(),
                2 * saturated > replications.size(), DemoSpan.of(p50), DemoSpan.of(p99), DemoSpan.of(tpot), late);
    }

    private static double[] field(List<DemoSide> sides, java.util.function.ToDoubleFunction<DemoSide> f) {
        return sides.stream().mapToDouble(f).toArray();
    }

    /**
     * Overloaded: over the second half of sending, requests were served at under 90% of the rate they were sent
     * (the 90% of LoadSweep's rule); below the knee they are served as fast as they come.
     */
    boolean overloaded() {
        return saturated || lateServiceRatePerS < 0.9 * sendRatePerS;
    }

}
