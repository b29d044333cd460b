package dev.infersim.demo;

import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.result.MeanInterval;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingResult;
import dev.infersim.sim.SimulationResult;
import dev.infersim.sim.SimulatorKeys;

import java.util.List;

/**
 * The numbers the table and charts compare, in model time (milliseconds and per second of the modelled GPU), with
 * the 95% intervals of TTFT p50 and p99 and of TPOT p50 (none for the closed form), and the requests served per
 * second over the second half of sending with the rates of its consecutive windows ({@link LateServiceRate}), whose
 * batch means bound the knee. {@code completedPerS} is the requests completed per second over that second half
 * ({@link LateServiceRate#completionRate}): the offered rate below the knee, at most the engine's sustained capacity
 * past it, never the offered load.
 * Requests waiting is Little's law on the engine's waiting room (requests taken in per second times the mean wait
 * from arrival to first scheduling); past saturation it measures how long the run lasted, not a steady state.
 * {@code sendRatePerS} is the rate actually offered while sending (a short Poisson run misses its nominal rate).
 */
record DemoSide(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double completedPerS, double requestsPerS,
            double meanWaiting, double sendRatePerS, double lateServiceRatePerS, boolean saturated,
            DemoSpan ttftP50, DemoSpan ttftP99, DemoSpan tpotP50, double[] serviceWindows) {

    /** Point values only: a closed form's, or a test's. */
    DemoSide(double ttftP50Ms, double ttftP99Ms, double tpotP50Ms, double completedPerS, double requestsPerS,
         double meanWaiting, double sendRatePerS, double lateServiceRatePerS, boolean saturated) {
        this(ttftP50Ms, ttftP99Ms, tpotP50Ms, completedPerS, requestsPerS, meanWaiting, sendRatePerS,
                lateServiceRatePerS, saturated, DemoSpan.NONE, DemoSpan.NONE, DemoSpan.NONE, new double[0]);
    }

    /** @param late the run's late service per second of wall time ({@link LateServiceRate.Late}) */
    static DemoSide measured(ServingResult<ClientKeys> r, double timeScale, LateServiceRate.Late late) {
        ClientKeys keys = r.producer();
        double requestsPerS = orNaN(keys.steadyRequestThroughput()) / timeScale;
        LateServiceRate.Late model = late.slower(timeScale);
        double[] windows = model.windows();
        return new DemoSide(median(r.metric("ttft")) * timeScale, p99(r.metric("ttft")) * timeScale,
                median(r.metric("tpot")) * timeScale, model.completedPerS(),
                requestsPerS, requestsPerS * orNaN(r.serverLatency("queue_time").meanMs()) * timeScale / 1e3,
                orNaN(keys.steadySendRate()) / timeScale,
                windows.length > 0 ? MeanInterval.of(windows).mean()
                        : LateServiceRate.ofSeries(keys.timeseries()) / timeScale, false,
                DemoSpan.of(r.interval("median_ttft_ms"), timeScale), DemoSpan.of(r.interval("p99_ttft_ms"), timeScale),
                DemoSpan.of(r.interval("median_tpot_ms"), timeScale), windows);
    }

    /**
     * The server's own account of a measured run ({@link DemoMeasurement.ServerTruth}): the rate its requests arrived at
     * and the rate they were served at late in the run, and their TTFT p99 from arrival, in model time.
     */
    static DemoSide serverTruth(DemoMeasurement.ServerTruth t) {
        double[] w = t.late().windows();
        return new DemoSide(Double.NaN, t.ttftP99Ms(), Double.NaN, t.late().completedPerS(), Double.NaN, Double.NaN,
                t.arrivalRatePerS(), w.length > 0 ? MeanInterval.of(w).mean() : Double.NaN, false, DemoSpan.NONE,
                DemoSpan.NONE, DemoSpan.NONE, w.clone());
    }

    private static double median(MetricSummary m) {
        return m == null ? Double.NaN : orNaN(m.medianMs());
    }

    private static double p99(MetricSummary m) {
        return m == null ? Double.NaN : m.percentileMs(99);
    }

    /**
     * @param late the run's late service per model second ({@link LateServiceRate.Late}); NONE for a run kept for its
     *             steady state, whose late rates then come from its timeline's completions
     */
    static DemoSide simulated(SimulationResult r, LateServiceRate.Late late) {
        ServingResult<SimulatorKeys> f = r.report(new RunInfo("", "infersim-sim", "m", "m", 1, 1, 1, 0,
                List.of("ttft", "tpot"), List.of(50.0, 99.0))).result();
        SimulatorKeys keys = f.producer();
        double requestsPerS = orNaN(keys.steadyRequestThroughput());
        double[] windows = late.windows();
        double fromTimeline = LateServiceRate.ofTimeline(r.timeline());
        return new DemoSide(f.metric("ttft").medianMs(), f.metric("ttft").percentileMs(99), f.metric("tpot").medianMs(),
                Double.isNaN(late.completedPerS()) ? fromTimeline : late.completedPerS(), requestsPerS,
                requestsPerS * f.serverLatency("queue_time").meanMs() / 1e3, orNaN(keys.steadySendRate()),
                windows.length > 0 ? MeanInterval.of(windows).mean() : fromTimeline, r.saturation().saturated(),
                DemoSpan.of(f.interval("median_ttft_ms"), 1), DemoSpan.of(f.interval("p99_ttft_ms"), 1),
                DemoSpan.of(f.interval("median_tpot_ms"), 1), windows);
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
                MeanInterval.of(field(replications, DemoSide::completedPerS)).mean(),
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
