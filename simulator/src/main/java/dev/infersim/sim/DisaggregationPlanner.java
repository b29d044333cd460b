package dev.infersim.sim;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.Workload;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleFunction;
import java.util.function.Supplier;

/**
 * The capacity question prefill/decode disaggregation raises, answered by simulation: on {@code replicas} replicas of
 * one deployment, which split into a prefill pool of P and a decode pool of N - P serves a workload best under an SLO
 * on TTFT and TPOT, and is any split better than the same replicas aggregated? Each configuration (aggregated N, and
 * every P:D with P + D = N) is simulated on the same seeded requests:
 * <ol>
 *   <li>at the workload's own rate, for its SLO attainment (the share of requests meeting every objective, vLLM's
 *       {@code request_goodput} over the requests) and percentiles;</li>
 *   <li>for its goodput rate: the highest request rate whose attainment is at least the target (DistServe's "per-GPU
 *       goodput", Zhong et al., OSDI 2024, section 2.2, with its 90% target as the default) and whose queues do not grow
 *       ({@link SaturationVerdict}: an objective on TPOT alone is met by a split whose prefill queue grows without
 *       bound, which is no rate it can sustain), found by doubling or halving
 *       from the workload's rate until the target is crossed, then {@value #BISECTIONS} bisections (a bracket of 2 shrunk
 *       to within 1.6%). Attainment is assumed to fall as the rate rises; on a seeded workload it does, up to noise
 *       of a few requests.</li>
 * </ol>
 * The best configuration has the highest goodput rate; at {@code dollarsPerGpuHour} its price per million requests
 * served within the SLO at that rate is {@code dollars x GPUs x 1e6 / (3600 x rate x attainment)}.
 */
public final class DisaggregationPlanner {
    static final int BISECTIONS = 6;
    /** Rates searched lie within this factor of the workload's rate, either way. */
    static final double SEARCH_RANGE = 64;

    private final int replicas;
    private final Supplier<EngineCore> engines;
    private final Supplier<Router> aggregatedRouter;
    private final Supplier<Router> prefillRouter;
    private final Supplier<Router> decodeRouter;
    private final KvTransferLink link;
    private final SimulationOptions options;
    private final double attainmentTarget;

    /**
     * @param replicas         the replicas (GPU groups) to split, at least 2
     * @param engines          a fresh engine per replica
     * @param aggregatedRouter the aggregated fleet's router (a fresh one per run)
     * @param prefillRouter    the prefill pool's router
     * @param decodeRouter     the decode pool's router
     * @param options          the runs' options; their SLO must bound TTFT or TPOT
     * @param attainmentTarget share of requests that must meet the SLO, in (0, 1]
     */
    public DisaggregationPlanner(int replicas, Supplier<EngineCore> engines, Supplier<Router> aggregatedRouter,
                                 Supplier<Router> prefillRouter, Supplier<Router> decodeRouter, KvTransferLink link,
                                 SimulationOptions options, double attainmentTarget) {
        ConfigException.check(replicas >= 2, "--replicas must be >= 2 to split into prefill and decode pools, got %d", replicas);
        GoodputSlo slo = options.slo();
        ConfigException.check(!Double.isNaN(slo.ttftMs()) || !Double.isNaN(slo.tpotMs()),
                "--plan-disaggregation needs an SLO: --goodput ttft:MS tpot:MS");
        ConfigException.check(attainmentTarget > 0 && attainmentTarget <= 1, "--slo-attainment must be in (0, 1], got %s",
                attainmentTarget);
        this.replicas = replicas;
        this.engines = engines;
        this.aggregatedRouter = aggregatedRouter;
        this.prefillRouter = prefillRouter;
        this.decodeRouter = decodeRouter;
        this.link = link;
        this.options = options;
        this.attainmentTarget = attainmentTarget;
    }

    /** One configuration: {@code prefill} 0 is the aggregated fleet of {@code decode} replicas. */
    public record Split(int prefill, int decode) {
        public boolean aggregated() {
            return prefill == 0;
        }

        @Override
        public String toString() {
            return aggregated() ? decode + " aggregated" : prefill + "P:" + decode + "D";
        }
    }

    /**
     * A configuration's outcome.
     *
     * @param atRate         the run at the workload's rate
     * @param attainment     share of that run's requests meeting the SLO
     * @param goodputRate    highest rate (req/s) at which the target attainment holds; 0 if none does
     * @param runs           simulations the search took
     * @param atSearchLimit  the goodput rate is the search's upper limit, {@value #SEARCH_RANGE} times the workload's
     *                       rate: the true one is higher
     */
    public record Outcome(Split split, SimulationResult atRate, double attainment, double goodputRate, int runs,
                          boolean atSearchLimit) {
    }

    /** Every configuration at the workload's rate {@code ratePerS}, {@code workloadAt} giving the requests at a rate. */
    public List<Outcome> plan(double ratePerS, DoubleFunction<Workload> workloadAt) {
        ConfigException.check(ratePerS > 0 && Double.isFinite(ratePerS),
                "--plan-disaggregation needs a finite --request-rate, got %s", ratePerS);
        List<Outcome> outcomes = new ArrayList<>();
        outcomes.add(outcome(new Split(0, replicas), ratePerS, workloadAt));
        for (int p = 1; p < replicas; p++) {
            outcomes.add(outcome(new Split(p, replicas - p), ratePerS, workloadAt));
        }
        return outcomes;
    }

    /** The outcome with the highest goodput rate (the first of equals: aggregated before any split). */
    public static Outcome best(List<Outcome> outcomes) {
        Outcome best = outcomes.get(0);
        for (Outcome o : outcomes) {
            if (o.goodputRate() > best.goodputRate()) {
                best = o;
            }
        }
        return best;
    }

    private Outcome outcome(Split split, double rate, DoubleFunction<Workload> workloadAt) {
        SimulationResult atRate = run(split, workloadAt.apply(rate));
        double attainment = attainment(atRate);
        int runs = 1;
        boolean met = meets(atRate);
        double pass = met ? rate : 0;
        double fail = met ? Double.NaN : rate;
        while (pass == 0 && fail > rate / SEARCH_RANGE) { // halve until the target holds
            fail /= 2;
            runs++;
            if (meets(run(split, workloadAt.apply(fail)))) {
                pass = fail;
                fail = pass * 2;
            }
        }
        while (Double.isNaN(fail) && pass < rate * SEARCH_RANGE) { // double until it fails
            runs++;
            if (meets(run(split, workloadAt.apply(pass * 2)))) {
                pass *= 2;
            } else {
                fail = pass * 2;
            }
        }
        for (int i = 0; i < BISECTIONS && pass > 0 && !Double.isNaN(fail); i++) {
            double mid = Math.sqrt(pass * fail);
            runs++;
            if (meets(run(split, workloadAt.apply(mid)))) {
                pass = mid;
            } else {
                fail = mid;
            }
        }
        return new Outcome(split, atRate, attainment, pass, runs, Double.isNaN(fail));
    }

    /** The target attainment, at a rate the fleet sustains. */
    private boolean meets(SimulationResult r) {
        return attainment(r) >= attainmentTarget && !r.saturation().saturated();
    }

    private double attainment(SimulationResult r) {
        long requests = r.stats().completed() + r.stats().failed();
        return requests == 0 ? 0 : (double) r.stats().goodRequests() / requests;
    }

    private SimulationResult run(Split split, Workload workload) {
        if (split.aggregated()) {
            return new Simulation(replicas(split.decode(), 0), aggregatedRouter.get(), options, null).run(workload);
        }
        DisaggregatedFleet pd = new DisaggregatedFleet(replicas(split.prefill(), 0), prefillRouter.get(),
                replicas(split.decode(), split.prefill()), decodeRouter.get(), link);
        return new Simulation(pd, options, null).run(workload);
    }

    private Replica[] replicas(int n, int firstId) {
        Replica[] r = new Replica[n];
        for (int i = 0; i < n; i++) {
            r[i] = new Replica(firstId + i, engines.get());
        }
        return r;
    }

    /** Dollars per million requests served within the SLO at the goodput rate; NaN without a price or a goodput rate. */
    public static double dollarsPerMillionGoodRequests(Outcome o, int gpus, double dollarsPerGpuHour, double attainment) {
        if (Double.isNaN(dollarsPerGpuHour) || o.goodputRate() <= 0) {
            return Double.NaN;
        }
        return dollarsPerGpuHour * gpus * 1e6 / (3600 * o.goodputRate() * attainment);
    }
}
