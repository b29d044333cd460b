package dev.infersim.demo;

import java.util.List;

/**
 * One rate of the sweep, seen three ways. {@code why} says why a run was added after the sweep (null for the
 * sweep's own rates); {@code serverTruth} is the server's own account of the measured run (the rates its requests
 * arrived and were served at), or null where it was not kept; {@code measuredTtftMs} each measured request's TTFT in
 * the order they were sent, model ms (+Infinity where it failed), empty where not kept, from which the report tells
 * whether the run shows the objective met ({@link ObjectiveMisses}).
 */
record DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
               DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
               String why, DemoSide serverTruth, double[] measuredTtftMs) {

    /**
     * The requests of the steady run ({@code steadySimulated}), the same rate simulated for long enough for the steady
     * state the chain describes, which a run of a few hundred requests near saturation does not reach (its batch is
     * still filling when it ends).
     */
    static final int STEADY_RUN_REQUESTS = 20_000;

    /** A row without the server's account or the measured requests' TTFTs. */
    DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
            DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
            String why) {
        this(rate, fraction, measured, simulated, predicted, steadySimulated, groundTruthP99Ms, measuredValid,
                invalidReasons, why, null);
    }

    /** A row without the measured requests' TTFTs. */
    DemoRow(double rate, double fraction, DemoSide measured, DemoSide simulated, DemoSide predicted,
            DemoSide steadySimulated, double groundTruthP99Ms, boolean measuredValid, List<String> invalidReasons,
            String why, DemoSide serverTruth) {
        this(rate, fraction, measured, simulated, predicted, steadySimulated, groundTruthP99Ms, measuredValid,
                invalidReasons, why, serverTruth, new double[0]);
    }

    /**
     * Whether the measured run shows the queue growing: the client's own numbers where its run is valid, the server's
     * account where the client flagged it invalid (a client too late to trust its latencies still saw the engine's
     * queue grow).
     */
    boolean measuredOverloaded() {
        DemoSide s = measuredKneeSide();
        return s != null && s.overloaded();
    }

    /**
     * Whether this machine's noise, not the engine, decides the objective at this rate: either the client's TTFT p99
     * and the server's own (the same requests, from arrival to first token) lie either side of {@code objectiveMs}, the
     * server's outside the client's 95% interval so that sampling does not explain the gap
     * ({@link #serverMeetsWhereClientMisses}); or the client's p99 misses it while the client's own error is a material
     * share of that p99 ({@link #clientErrorIsMaterial}): a p99 is its slowest 1% of requests, which are then largely
     * the client's own lateness (the mock's truth, served by the same busy machine, can be late too). The client's
     * lateness only adds delay, so a p99 that meets the objective is not in doubt.
     */
    boolean machineDecidesObjective(double objectiveMs) {
        return measuredValid && (serverMeetsWhereClientMisses(objectiveMs)
                || measured.ttftP99Ms() > objectiveMs && clientErrorIsMaterial());
    }

    /** The client's and the server's TTFT p99 either side of the objective, the server's outside the client's interval. */
    boolean serverMeetsWhereClientMisses(double objectiveMs) {
        double server = serverTruth == null ? Double.NaN : serverTruth.ttftP99Ms();
        double client = measured.ttftP99Ms();
        DemoSpan span = measured.ttftP99();
        return !Double.isNaN(server) && !Double.isNaN(client)
                && (client > objectiveMs) != (server > objectiveMs) && (server < span.low() || server > span.high());
    }

    /**
     * A client error (against the server's truth, p99) above this share of the measured TTFT p99: this machine was too
     * busy during the run for the measured tail to mean much.
     */
    static final double CLIENT_ERROR_SHARE = 0.25;

    boolean clientErrorIsMaterial() {
        return groundTruthP99Ms > CLIENT_ERROR_SHARE * measured.ttftP99Ms();
    }

    /** The measured side the knee may rest on: the client's run if valid, else the server's account, else null. */
    DemoSide measuredKneeSide() {
        return measuredValid ? measured : serverTruth;
    }
}
